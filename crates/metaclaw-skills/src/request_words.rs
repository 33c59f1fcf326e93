//! Everyday "request words": the words people use to ask for anything ("explain", "help me
//! write", "a message", "last week"), per language. Skills' trigger phrases are written as
//! requests, so they share these words with every off-topic task; a skill may gain score from
//! them, but a match made of request words alone is not evidence that the skill fits.

use std::collections::HashSet;

use crate::analyzer::Analyzer;

/// Written by hand for the six languages of the users; each entry goes through the same
/// analyzer as the skills, so inflections and CJK bigrams of an entry are covered too.
const WORDS: &[(&str, &str)] = &[
    (
        "en",
        "explain explanation help write writing wrote message messages note week weekend \
         today tomorrow yesterday last next day days month year time tell make made want need \
         please give show thing things quick quickly short simple simply good best better way \
         question know get let look find take use try new idea ideas people friend family \
         something anything someone kind sort little lot start choose pick end terms mother father mom dad grandmother grandma grandfather grandpa parents kids children daughter son wife husband",
    ),
    (
        "es",
        "explicar explícame explica explicación ayuda ayúdame ayudar escribir escribe escríbeme \
         mensaje semana fin hoy mañana ayer pasado próximo día mes año tiempo decir dime hacer \
         hazme quiero querer necesito necesitar dar dame mostrar cosa cosas rápido corto \
         sencillo bueno mejor manera forma pregunta saber buscar usar nuevo idea gente amigo elegir escoger madre padre abuela abuelo hijo hija hijos niños esposa marido",
    ),
    (
        "de",
        "erklären erklär erkläre erklärung helfen hilf hilfe schreiben schreib nachricht woche \
         wochenende heute morgen gestern letzte letzten nächste nächsten tag monat jahr zeit \
         sagen sag machen mach wollen brauchen brauche geben gib zeigen ding dinge schnell kurz \
         einfach gut beste besser art weise frage wissen finden benutzen neu idee leute freund wählen aussuchen mutter vater oma opa eltern kinder tochter sohn frau mann",
    ),
    (
        "fr",
        "expliquer explique explication aider aide écrire écris message semaine week-end \
         aujourd'hui demain hier dernier dernière prochain prochaine jour mois année temps dire \
         dis faire fais vouloir veux besoin donner donne montrer chose choses rapide court \
         simple bon meilleur façon manière question savoir trouver utiliser nouveau idée gens \
         ami choisir mère père grand-mère grand-père parents enfants fils fille femme mari",
    ),
    (
        "zh",
        "解释 解释一下 说明 帮忙 帮助 帮我 写 写一 消息 信息 星期 周末 上周 下周 这周 本周 \
         上个月 下个月 今天 明天 昨天 时间 告诉 做 想要 需要 一下 东西 简单 怎么 什么 问题 \
         知道 推荐 比较 一个 一些 朋友 选择 挑选 妈妈 爸爸 奶奶 爷爷 外婆 孩子 女儿 儿子 老婆 老公",
    ),
    (
        "ja",
        "説明 教え 書い 書く 書き メッセージ 今週 先週 来週 週末 手伝 作っ 作る 今日 明日 昨日 \
         時間 簡単 方法 質問 願い 一緒 考え 友達 選ん 選ぶ 母 父 祖母 祖父 両親 子供 娘 息子 妻 夫",
    ),
];

/// The index terms of every request word.
pub(crate) fn terms(analyzer: &Analyzer) -> HashSet<String> {
    WORDS
        .iter()
        .flat_map(|(_, words)| analyzer.words(words))
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inflections_and_languages_are_covered() {
        let a = Analyzer::new();
        let t = terms(&a);
        for word in [
            "explaining",
            "messages",
            "Nachrichten",
            "解释",
            "メッセージ",
        ] {
            let variants = a.words(word);
            assert!(
                variants[0].iter().any(|v| t.contains(v)),
                "{word}: {variants:?}"
            );
        }
        for content in ["email", "flaky", "合并", "議事録"] {
            let variants = a.words(content);
            assert!(
                variants.iter().flatten().all(|v| !t.contains(v)),
                "{content} must stay a content word"
            );
        }
    }
}
