//! OpenAI (and OpenClaw) message and tool shapes → `ChatMessage` / `ToolSpec`.

use metaclaw_render::{
    ChatMessage, RenderError, Role, ToolCall, messages_from_openai, tools_from_openai,
};
use serde_json::json;

#[test]
fn converts_openai_messages() {
    let messages = [
        json!({"role": "developer", "content": "Be brief."}),
        json!({"role": "user", "content": [
            {"type": "text", "text": "first"},
            {"type": "text", "text": "second"}
        ]}),
        json!({"role": "assistant", "content": null, "reasoning_content": "think",
        "tool_calls": [
            {"id": "call_x", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
            {"type": "function", "function": {"name": "search", "arguments": {"q": 1}}}
        ]}),
        json!({"role": "tool", "tool_call_id": "call_x", "name": "get_weather", "content": "sunny"}),
        json!({"role": "assistant", "content": "done", "reasoning": "r2"}),
    ];
    let out = messages_from_openai(&messages).unwrap();
    assert_eq!(out[0], ChatMessage::system("Be brief."));
    assert_eq!(out[1], ChatMessage::user("first\nsecond"));
    assert_eq!(out[2].role, Role::Assistant);
    assert_eq!(out[2].content, "");
    assert_eq!(out[2].reasoning.as_deref(), Some("think"));
    assert_eq!(
        out[2].tool_calls,
        [
            ToolCall {
                id: "call_x".into(),
                name: "get_weather".into(),
                arguments: "{\"city\":\"Paris\"}".into()
            },
            ToolCall {
                id: "call_1".into(),
                name: "search".into(),
                arguments: "{\"q\":1}".into()
            },
        ]
    );
    assert_eq!(
        out[3],
        ChatMessage::tool("call_x", "sunny").with_name("get_weather")
    );
    assert_eq!(out[4].reasoning.as_deref(), Some("r2"));

    // Back to OpenAI shape.
    let back = out[2].to_openai();
    assert_eq!(
        back["tool_calls"][0]["function"]["arguments"],
        "{\"city\":\"Paris\"}"
    );
    assert_eq!(back["reasoning_content"], "think");
}

#[test]
fn converts_openclaw_shapes() {
    let messages = [
        json!({"role": "assistant", "content": [
            {"type": "text", "text": "running"},
            {"type": "toolCall", "id": "tc1", "name": "exec", "arguments": {"command": "ls"}}
        ]}),
        json!({"role": "toolResult", "toolCallId": "tc1", "toolName": "exec",
               "content": [{"type": "text", "text": "a.txt"}]}),
    ];
    let out = messages_from_openai(&messages).unwrap();
    assert_eq!(out[0].content, "running");
    assert_eq!(out[0].tool_calls[0].name, "exec");
    assert_eq!(out[0].tool_calls[0].id, "tc1");
    assert_eq!(out[1].role, Role::Tool);
    assert_eq!(out[1].tool_call_id.as_deref(), Some("tc1"));
    assert_eq!(out[1].name.as_deref(), Some("exec"));
    assert_eq!(out[1].content, "a.txt");
}

#[test]
fn rejects_images_and_bad_messages() {
    let err = messages_from_openai(&[json!({"role": "user", "content": [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    ]})])
    .unwrap_err();
    assert!(matches!(err, RenderError::UnsupportedContent(ref k) if k == "image_url"));
    assert!(err.to_string().contains("image_url"), "{err}");

    let err = messages_from_openai(&[json!({"role": "wizard", "content": "x"})]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid message at index 0: unknown role \"wizard\""
    );
    assert!(messages_from_openai(&[json!("hi")]).is_err());
    assert!(messages_from_openai(&[json!({"content": "x"})]).is_err());
}

#[test]
fn converts_tools() {
    let tools = json!([
        {"type": "function", "function": {"name": "a", "description": "A tool",
            "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}}}},
        {"name": "b", "description": "Anthropic style", "input_schema": {"type": "object"}},
        {"type": "function", "function": {"description": "no name"}},
        {"name": "c"}
    ]);
    let specs = tools_from_openai(&tools);
    let names: Vec<&str> = specs.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(specs[0].description, "A tool");
    assert_eq!(specs[1].parameters, json!({"type": "object"}));
    assert_eq!(
        specs[2].parameters,
        json!({"type": "object", "properties": {}})
    );
    assert_eq!(
        specs[0].to_openai(),
        json!({"type": "function", "function": {"name": "a", "description": "A tool",
            "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}}}})
    );
    assert!(tools_from_openai(&json!(null)).is_empty());
}
