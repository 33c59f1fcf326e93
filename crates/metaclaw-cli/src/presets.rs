/// Provider presets offered by `metaclaw setup`.
pub struct Preset {
    pub name: &'static str,
    pub label: &'static str,
    pub api_base: &'static str,
    pub model: &'static str,
}

pub const PRESETS: &[Preset] = &[
    Preset {
        name: "kimi",
        label: "Kimi (Moonshot)",
        api_base: "https://api.moonshot.cn/v1",
        model: "moonshotai/Kimi-K2.5",
    },
    Preset {
        name: "qwen",
        label: "Qwen (DashScope)",
        api_base: "https://dashscope.aliyuncs.com/compatible-mode/v1",
        model: "qwen-plus",
    },
    Preset {
        name: "openai",
        label: "OpenAI",
        api_base: "https://api.openai.com/v1",
        model: "gpt-4o",
    },
    Preset {
        name: "openrouter",
        label: "OpenRouter",
        api_base: "https://openrouter.ai/api/v1",
        model: "moonshotai/kimi-k2.5",
    },
    Preset {
        name: "anthropic",
        label: "Anthropic (Messages API)",
        api_base: "https://api.anthropic.com",
        model: "claude-sonnet-4-6",
    },
    Preset {
        name: "custom",
        label: "Custom OpenAI-compatible endpoint",
        api_base: "",
        model: "",
    },
];

pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name.eq_ignore_ascii_case(name))
}
