//! config.yaml text, then `metaclaw config KEY VALUE` edits: parse, validate, mask, save/load
//! round trip, dotted set/get with CLI coercion.
//!
//! Input: the YAML, then optionally a NUL byte and edit lines `dotted.key=raw value`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use metaclaw_config::{Document, coerce, load_str, masked, validate};

/// What `save` then `load_document` would give back.
fn reloaded(doc: &Document) -> Document {
    let yaml = doc.to_yaml().expect("a parsed document serializes");
    Document::parse(&yaml)
        .unwrap_or_else(|e| panic!("the saved document does not parse again: {e}\n{yaml}"))
}

fn check(doc: &Document) {
    assert_eq!(
        &reloaded(doc),
        doc,
        "saving and loading changed the document"
    );
    let _ = masked(doc);
    if let Ok((config, _warnings)) = validate(doc) {
        // The effective config as a document (what the dashboard shows and edits) validates
        // to the same config.
        let effective = config.to_document();
        match validate(&effective) {
            Ok((again, _)) => assert_eq!(again, config, "effective config drifted"),
            Err(e) => panic!("the effective config does not validate: {e}"),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (yaml, edits) = text.split_once('\0').unwrap_or((text, ""));
    let _ = load_str(yaml);
    let Ok(mut doc) = Document::parse(yaml) else {
        return;
    };
    check(&doc);
    for line in edits.lines().take(8) {
        let Some((key, raw)) = line.split_once('=') else {
            continue;
        };
        if let Ok(stored) = doc.set_str(key, raw) {
            assert_eq!(stored, coerce(raw));
            assert_eq!(
                doc.get(key),
                Some(&stored),
                "`{key}` reads back differently"
            );
            check(&doc);
        }
    }
});
