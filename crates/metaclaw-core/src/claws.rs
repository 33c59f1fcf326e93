//! The claws other than OpenClaw: data-driven recipes (metaclaw-claws) with backups.

use metaclaw_claws::{PathEnv, WireParams};
use metaclaw_config::{AuthMethod, ClawType, Config, Home};
use metaclaw_openclaw::WireSpec;

use crate::wiring::WiringReport;

fn recipe_for(claw: ClawType, report: &mut WiringReport) -> Option<metaclaw_claws::Recipe> {
    let name = claw.as_str();
    let recipe = metaclaw_claws::recipe(name);
    if recipe.is_none() {
        report.lines.push(format!("claw_type `{name}` has no wiring recipe in this version; point it at the proxy yourself"));
    }
    recipe
}

fn state_dir(home: &Home) -> std::path::PathBuf {
    home.root().join("wiring")
}

pub(crate) fn wire(
    claw: ClawType,
    config: &Config,
    spec: &WireSpec,
    home: &Home,
    report: &mut WiringReport,
) {
    let Some(recipe) = recipe_for(claw, report) else {
        return;
    };
    let params = WireParams {
        base_url: spec.base_url.clone(),
        anthropic_base_url: spec.base_url.trim_end_matches("/v1").to_owned(),
        api_key: spec.api_key.clone(),
        model: spec.model.clone(),
        context_window: spec.context_window,
        max_tokens: spec.max_tokens,
        passthrough: config.llm.auth_method == AuthMethod::Passthrough,
    };
    let Some(env) = PathEnv::from_process() else {
        report
            .lines
            .push(format!("{} was not wired: HOME is not set", recipe.name()));
        return;
    };
    match metaclaw_claws::apply(&recipe, &params, &env, &state_dir(home)) {
        Ok(wired) => {
            report.lines.push(wired.to_string());
            report
                .lines
                .push(metaclaw_claws::restart(&recipe).to_string());
        }
        Err(e) => {
            report
                .lines
                .push(format!("{} was not wired: {e}", recipe.name()));
            report.manual = Some(format!(
                "Point {} at {} with the API key from `metaclaw config proxy.api_key` and the model `{}`.",
                recipe.name(),
                spec.base_url,
                spec.model
            ));
        }
    }
}

pub(crate) fn unwire(claw: ClawType, home: &Home, report: &mut WiringReport) {
    let Some(recipe) = recipe_for(claw, report) else {
        return;
    };
    match metaclaw_claws::restore(&recipe, &state_dir(home)) {
        Ok(restored) => {
            report.lines.push(restored.to_string());
            if restored.is_complete() {
                report
                    .lines
                    .push(metaclaw_claws::restart(&recipe).to_string());
            }
        }
        Err(e) => report
            .lines
            .push(format!("restoring {} failed: {e}", recipe.name())),
    }
}
