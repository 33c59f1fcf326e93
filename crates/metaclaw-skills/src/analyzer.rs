//! Text to index terms, for every language the users write in.
//!
//! - Chinese, Japanese and Korean have no spaces: runs of those characters become overlapping
//!   character bigrams (a run of one character stays a unigram). Japanese hiragana is treated
//!   as a separator: it carries particles and inflections, while the content words are
//!   kanji and katakana.
//! - Other words are lowercased; stop words of English, Spanish, German and French are
//!   dropped; each word is stemmed with all four Snowball stemmers and accents are folded
//!   ("configuración", "configuracion" and "configurations" meet). The language of a short
//!   request cannot be told reliably, so a word keeps every distinct stem as a *variant*, and
//!   a query word counts once per skill, with its best-matching variant.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use rust_stemmers::{Algorithm, Stemmer};
use unicode_segmentation::UnicodeSegmentation;

/// The Snowball languages among MetaClaw's users (Chinese and Japanese need no stemming).
const STEMMED: [Algorithm; 4] = [
    Algorithm::English,
    Algorithm::Spanish,
    Algorithm::German,
    Algorithm::French,
];
const STOP_LANGUAGES: [&str; 6] = ["en", "es", "de", "fr", "zh", "ja"];
/// Conversational words the stop lists lack: French "ça" (folded "ca") and "va" turn
/// "comment ça va ?" into a match for any trigger saying "ça marchait".
const EXTRA_STOP: [&str; 3] = ["ça", "ca", "va"];

/// One word of the text: the index terms it may appear as (at least one).
pub type Variants = Vec<String>;

pub struct Analyzer {
    stemmers: Vec<Stemmer>,
    stop: HashSet<&'static str>,
    options: AnalyzerOptions,
    /// Variants of words seen before (`None`: a stop word). Eight stemmings a word are most
    /// of a request's retrieval time, and people reuse their words. Emptied when full, so
    /// it never holds more than [`WORD_CACHE`] words.
    seen: Mutex<HashMap<String, Option<Variants>>>,
}

/// Words the analyzer remembers (about 1 MB at most).
const WORD_CACHE: usize = 8192;

/// What the analyzer does; the default is what retrieval uses. The other settings exist to
/// measure the choice (`skills-eval --options`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AnalyzerOptions {
    pub cjk: Cjk,
    /// Stem with the Spanish, German and French stemmers too, not only English.
    pub multilingual_stems: bool,
    /// Keep a katakana run whole instead of cutting it into bigrams.
    pub katakana_words: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cjk {
    /// Drop CJK text (what an English tokenizer amounts to).
    Ignore,
    /// Overlapping character bigrams.
    Bigrams,
    /// Bigrams plus every single character.
    UnigramsAndBigrams,
}

impl Default for AnalyzerOptions {
    fn default() -> Self {
        AnalyzerOptions {
            cjk: Cjk::Bigrams,
            multilingual_stems: true,
            katakana_words: true,
        }
    }
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Analyzer")
            .field("stop_words", &self.stop.len())
            .finish()
    }
}

impl Default for Analyzer {
    fn default() -> Self {
        Self::new()
    }
}

/// Han, kana, Hangul and their compatibility forms: scripts written without spaces.
pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // hiragana, katakana
        | 0x31F0..=0x31FF    // katakana phonetic extensions
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0xFF66..=0xFF9F    // half-width katakana
        | 0x20000..=0x2FA1F) // CJK extensions B–F and supplements
}

/// Chinese pronouns, particles, measure words and politeness verbs. Bigrams are taken across
/// word boundaries, so "帮我写一首诗" yields "帮我", "我写" and "写一", which match any trigger
/// phrase that starts "帮我写…" although they say nothing about the task; a bigram holding one
/// of these characters is dropped. Only pronouns and sentence particles are listed: characters
/// that also begin or end content words (请求, 一直, 个人, 被杀, 会议) are left out on purpose.
const FUNCTION_CHARS: &str = "我你您他她它们的了吗吧呢啊呀么";

fn is_function_char(c: char) -> bool {
    FUNCTION_CHARS.contains(c)
}

/// Katakana, its phonetic extensions and half-width forms, and the long-vowel mark.
fn is_katakana(c: char) -> bool {
    matches!(c as u32, 0x30A0..=0x30FF | 0x31F0..=0x31FF | 0xFF66..=0xFF9F)
}

fn is_hiragana(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x309F)
}

/// Lowercase ASCII after transliterating accented Latin letters (`é` → `e`, `ß` → `ss`).
fn fold(word: &str) -> String {
    if word.is_ascii() {
        return word.to_owned();
    }
    deunicode::deunicode(word).to_lowercase()
}

impl Analyzer {
    pub fn new() -> Analyzer {
        Analyzer::with_options(AnalyzerOptions::default())
    }

    pub fn with_options(options: AnalyzerOptions) -> Analyzer {
        let stop = STOP_LANGUAGES
            .iter()
            .flat_map(|lang| stop_words::get(lang).iter().copied())
            .chain(EXTRA_STOP)
            .collect();
        let languages = if options.multilingual_stems { 4 } else { 1 };
        Analyzer {
            stemmers: STEMMED
                .into_iter()
                .take(languages)
                .map(Stemmer::create)
                .collect(),
            stop,
            options,
            seen: Mutex::new(HashMap::new()),
        }
    }

    pub fn options(&self) -> AnalyzerOptions {
        self.options
    }

    /// The words of `text`, in order, each with its term variants.
    pub fn words(&self, text: &str) -> Vec<Variants> {
        let lower = text.to_lowercase();
        let mut out = Vec::new();
        let mut run = String::new();
        for segment in lower.split_word_bounds() {
            // A segment is a word, or punctuation and spaces, which end a CJK run.
            for c in segment.chars() {
                if is_cjk(c) && !is_hiragana(c) {
                    // Katakana spells whole loanwords; kanji next to it starts another word.
                    if run
                        .chars()
                        .last()
                        .is_some_and(|l| is_katakana(l) != is_katakana(c))
                    {
                        self.flush_run(&mut run, &mut out);
                    }
                    run.push(c);
                } else {
                    self.flush_run(&mut run, &mut out);
                }
            }
            if !segment.chars().any(is_cjk) {
                self.latin_word(segment, &mut out);
            } else if segment.chars().any(|c| !is_cjk(c) && c.is_alphanumeric()) {
                // Mixed segments ("用python"): the non-CJK letters form their own word.
                let rest: String = segment.chars().filter(|c| !is_cjk(*c)).collect();
                self.latin_word(&rest, &mut out);
            }
        }
        self.flush_run(&mut run, &mut out);
        out
    }

    /// Every distinct term of `text` (for explanations and tests).
    pub fn terms(&self, text: &str) -> Vec<String> {
        let mut terms: Vec<String> = self.words(text).into_iter().flatten().collect();
        terms.sort_unstable();
        terms.dedup();
        terms
    }

    fn flush_run(&self, run: &mut String, out: &mut Vec<Variants>) {
        let chars: Vec<char> = run.chars().collect();
        run.clear();
        if self.options.cjk == Cjk::Ignore {
            return;
        }
        // A katakana run is one loanword ("スタックトレース"): its bigrams ("レー", "ース")
        // occur in unrelated loanwords ("カレー", "データベース"), so it stays whole.
        if self.options.katakana_words && chars.iter().copied().all(is_katakana) {
            if chars.len() > 1 {
                out.push(vec![chars.into_iter().collect()]);
            }
            return;
        }
        if self.options.cjk == Cjk::UnigramsAndBigrams && chars.len() > 1 {
            for c in &chars {
                let t = c.to_string();
                if !self.stop.contains(t.as_str()) {
                    out.push(vec![t]);
                }
            }
        }
        match chars.len() {
            0 => {}
            1 => {
                let t = chars[0].to_string();
                if !self.stop.contains(t.as_str()) && !is_function_char(chars[0]) {
                    out.push(vec![t]);
                }
            }
            _ => {
                for pair in chars.windows(2) {
                    if pair.iter().copied().any(is_function_char) {
                        continue;
                    }
                    let t: String = pair.iter().collect();
                    if !self.stop.contains(t.as_str()) {
                        out.push(vec![t]);
                    }
                }
            }
        }
    }

    /// A segment may hold an elision or a contraction ("l'erreur", "what's", "don't"): each
    /// part is a word of its own, so "erreur" is found and "what" is a stop word.
    fn latin_word(&self, segment: &str, out: &mut Vec<Variants>) {
        for part in segment.split(['\'', '\u{2019}']) {
            self.latin_part(part, out);
        }
    }

    fn latin_part(&self, word: &str, out: &mut Vec<Variants>) {
        let word = word.trim_matches(|c: char| !c.is_alphanumeric());
        if word.chars().count() < 2 || !word.chars().any(char::is_alphanumeric) {
            return;
        }
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let variants = match seen.get(word) {
            Some(known) => known.clone(),
            None => {
                let fresh = self.variants(word);
                if seen.len() >= WORD_CACHE {
                    seen.clear();
                }
                seen.insert(word.to_owned(), fresh.clone());
                fresh
            }
        };
        drop(seen);
        out.extend(variants);
    }

    /// A word's index terms, or `None` for a stop word.
    fn variants(&self, word: &str) -> Option<Variants> {
        let folded = fold(word);
        if self.stop.contains(word) || self.stop.contains(folded.as_str()) {
            return None;
        }
        let mut variants: Variants = Vec::with_capacity(4);
        let mut add = |t: String| {
            if t.len() >= 2 && !variants.contains(&t) {
                variants.push(t);
            }
        };
        for stemmer in &self.stemmers {
            add(fold(&stemmer.stem(word)));
            if folded != word {
                add(stemmer.stem(&folded).into_owned());
            }
        }
        if variants.is_empty() {
            variants.push(folded);
        }
        Some(variants)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(a: &Analyzer, text: &str) -> Vec<String> {
        a.words(text).into_iter().map(|v| v[0].clone()).collect()
    }

    #[test]
    fn chinese_becomes_character_bigrams_split_at_punctuation() {
        let a = Analyzer::new();
        let terms = a.terms("代码审查，合并");
        for t in ["代码", "码审", "审查", "合并"] {
            assert!(terms.contains(&t.to_owned()), "{t} missing from {terms:?}");
        }
        assert!(
            !terms.contains(&"查合".to_owned()),
            "a comma ends the run: {terms:?}"
        );
        // A single character between separators is kept as a unigram.
        assert!(a.terms("写 信").contains(&"信".to_owned()));
    }

    #[test]
    fn remembered_words_analyse_as_before_and_the_memory_stays_bounded() {
        let a = Analyzer::new();
        let text = "Les configurations échouent: the tests are failing again";
        let first = a.words(text);
        assert_eq!(a.words(text), first, "a remembered word keeps its variants");
        assert_eq!(
            first,
            Analyzer::new().words(text),
            "same as a fresh analyzer"
        );
        // Stop words are remembered as such.
        assert!(a.words("the are les").is_empty());
        for i in 0..WORD_CACHE + 10 {
            a.words(&format!("word{i}"));
        }
        let held = a.seen.lock().unwrap().len();
        assert!(held <= WORD_CACHE, "{held} words held");
        assert_eq!(
            a.words(text),
            first,
            "the same after the memory was emptied"
        );
    }

    #[test]
    fn japanese_kana_particles_separate_content_words() {
        let a = Analyzer::new();
        let terms = a.terms("このプルリクエストをレビューしてください");
        assert!(terms.contains(&"レビュー".to_owned()), "{terms:?}");
        assert!(terms.contains(&"プルリクエスト".to_owned()), "{terms:?}");
        assert!(
            terms.iter().all(|t| !t.chars().any(is_hiragana)),
            "hiragana never forms terms: {terms:?}"
        );
    }

    #[test]
    fn katakana_loanwords_stay_whole_and_split_from_kanji() {
        let a = Analyzer::new();
        let terms = a.terms("簡単なカレーの作り方");
        assert!(terms.contains(&"カレー".to_owned()), "{terms:?}");
        assert!(!terms.contains(&"レー".to_owned()), "{terms:?}");
        let terms = a.terms("データ分析");
        assert_eq!(terms, ["データ", "分析"]);
    }

    #[test]
    fn chinese_function_words_are_dropped() {
        let a = Analyzer::new();
        let terms = a.terms("我们可以");
        assert!(
            !terms.contains(&"我们".to_owned()) && !terms.contains(&"可以".to_owned()),
            "{terms:?}"
        );
    }

    #[test]
    fn bigrams_across_chinese_function_characters_are_dropped() {
        let a = Analyzer::new();
        let terms = a.terms("帮我写一首关于秋天的诗");
        for t in ["帮我", "我写"] {
            assert!(!terms.contains(&t.to_owned()), "{t} kept: {terms:?}");
        }
        assert!(terms.contains(&"秋天".to_owned()), "{terms:?}");
        assert!(a.terms("接口请求超时").contains(&"请求".to_owned()));
        let terms = a.terms("怎么安排");
        assert!(
            terms == ["安排"],
            "the bigram straddling 么 goes, the word stays: {terms:?}"
        );
    }

    #[test]
    fn european_words_are_stemmed_folded_and_stop_words_go() {
        let a = Analyzer::new();
        let has =
            |text: &str, term: &str| a.words(text).iter().any(|v| v.iter().any(|t| t == term));
        // Accented and unaccented Spanish meet; so do inflections.
        let with = a.words("configuración");
        let without = a.words("configuracion");
        assert!(
            with[0].iter().any(|t| without[0].contains(t)),
            "{with:?} vs {without:?}"
        );
        assert!(has("pruebas", "prueb") && has("prueba", "prueb"));
        assert!(
            has("Überprüfung", "uberpruf"),
            "{:?}",
            a.words("Überprüfung")
        );
        assert!(has("testing", "test") && has("tests", "test"));
        assert!(has("déploiements", "deploi") && has("déployer", "deploi"));
        assert!(
            flat(&a, "the und les el").is_empty(),
            "{:?}",
            flat(&a, "the und les el")
        );
    }

    #[test]
    fn elisions_and_contractions_split_at_the_apostrophe() {
        let a = Analyzer::new();
        assert!(
            a.terms("what's that?").is_empty(),
            "{:?}",
            a.terms("what's")
        );
        assert!(a.terms("l'erreur").contains(&"erreur".to_owned()));
        assert_eq!(a.terms("d\u{2019}appels"), a.terms("appels"));
    }

    #[test]
    fn mixed_script_text_keeps_both_parts() {
        let a = Analyzer::new();
        let terms = a.terms("用Python写单元测试");
        assert!(terms.contains(&"python".to_owned()), "{terms:?}");
        assert!(terms.contains(&"测试".to_owned()), "{terms:?}");
    }
}
