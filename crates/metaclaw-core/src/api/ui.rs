//! The dashboard's built files (ui/dist), embedded at compile time by build.rs.

use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use include_dir::{Dir, include_dir};

static UI: Dir<'static> = include_dir!("$OUT_DIR/ui");

pub(crate) async fn serve(uri: Uri) -> Response {
    let path = uri.path().trim_start_matches('/');
    if path.starts_with("v1/") || path.starts_with("api/") {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    }
    // Hash routing: any other path gets the app.
    let file = UI
        .get_file(path)
        .filter(|_| !path.is_empty())
        .or_else(|| UI.get_file("index.html"));
    match file {
        Some(f) => {
            let mime = mime_guess::from_path(f.path()).first_or_octet_stream();
            let cache = if f.path().starts_with("assets") {
                "public, max-age=31536000, immutable"
            } else {
                "no-cache"
            };
            (
                [
                    (header::CONTENT_TYPE, mime.as_ref().to_owned()),
                    (header::CACHE_CONTROL, cache.to_owned()),
                ],
                f.contents(),
            )
                .into_response()
        }
        None => (
            StatusCode::NOT_FOUND,
            "the dashboard is not built: run scripts/build-ui.sh, then rebuild",
        )
            .into_response(),
    }
}
