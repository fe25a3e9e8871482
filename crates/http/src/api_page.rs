//! The readable API page (`docs/api.md`), rendered from the OpenAPI document so that the two
//! cannot disagree: `agent-runtime openapi --markdown` prints it, `make openapi` commits it, and a
//! test renders the committed `docs/openapi.json` again and compares.

use std::fmt::Write;

use serde_json::Value;

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

/// The document's tag that holds the MCP tools: a trait tag (`x-traitTag`), which Redoc shows on
/// `/docs` as a section of its own, and which owns no operation.
pub(crate) const MCP_TOOLS_TAG: &str = "MCP tools";

/// The whole page for an OpenAPI 3.1 document.
pub fn render(doc: &Value) -> String {
    let mut page = String::new();
    let info = &doc["info"];
    let _ = writeln!(page, "# {} HTTP API\n", text(&info["title"]));
    let _ = writeln!(
        page,
        "<!-- Rendered from docs/openapi.json by `make openapi`: edit the handlers' documentation \
         in crates/http, not this file. -->\n"
    );
    let _ = writeln!(
        page,
        "Version {} (OpenAPI {}). The same description is served at `GET /openapi.json` and as \
         a page at `GET /docs`.\n",
        text(&info["version"]),
        text(&doc["openapi"])
    );
    if let Some(description) = info["description"].as_str() {
        let _ = writeln!(page, "{}\n", description.trim_end());
    }
    let operations = operations(doc);
    page.push_str("## Endpoints\n\n| method | path | what it does |\n|---|---|---|\n");
    for operation in &operations {
        let _ = writeln!(
            page,
            "| {} | [`{}`](#{}) | {} |",
            operation.method.to_uppercase(),
            operation.path,
            anchor(&operation.heading()),
            cell(operation.body["summary"].as_str().unwrap_or_default())
        );
    }
    page.push('\n');
    for tag in tags(doc) {
        let in_tag: Vec<_> = operations.iter().filter(|op| op.tag == tag.0).collect();
        if in_tag.is_empty() {
            continue;
        }
        let _ = writeln!(page, "## {}\n", capitalised(&tag.0));
        if !tag.1.is_empty() {
            let _ = writeln!(page, "{}.\n", tag.1.trim_end_matches('.'));
        }
        for operation in in_tag {
            render_operation(&mut page, operation);
        }
    }
    if let Some(tools) = trait_tag(doc, MCP_TOOLS_TAG) {
        let _ = writeln!(page, "## {MCP_TOOLS_TAG}\n\n{}\n", tools.trim_end());
    }
    render_schemas(&mut page, &doc["components"]["schemas"]);
    page.truncate(page.trim_end().len());
    page.push('\n');
    page
}

struct Operation<'a> {
    method: &'static str,
    path: &'a str,
    tag: String,
    body: &'a Value,
}

impl Operation<'_> {
    fn heading(&self) -> String {
        format!("{} {}", self.method.to_uppercase(), self.path)
    }
}

fn operations(doc: &Value) -> Vec<Operation<'_>> {
    let mut found = Vec::new();
    if let Some(paths) = doc["paths"].as_object() {
        for (path, item) in paths {
            for method in METHODS {
                if let Some(body) = item.get(method) {
                    let tag = body["tags"][0].as_str().unwrap_or("other").to_owned();
                    found.push(Operation {
                        method,
                        path,
                        tag,
                        body,
                    });
                }
            }
        }
    }
    let order = tags(doc);
    found.sort_by_key(|op| order.iter().position(|(name, _)| *name == op.tag));
    found
}

/// The description of the trait tag `name`: a section of the page that owns no operation.
fn trait_tag<'d>(doc: &'d Value, name: &str) -> Option<&'d str> {
    doc["tags"]
        .as_array()?
        .iter()
        .find(|tag| tag["name"] == name && tag["x-traitTag"] == true)?["description"]
        .as_str()
}

/// Tags with their descriptions, in the document's order.
fn tags(doc: &Value) -> Vec<(String, String)> {
    doc["tags"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|tag| (text(&tag["name"]), text(&tag["description"])))
        .collect()
}

fn render_operation(page: &mut String, operation: &Operation) {
    let body = operation.body;
    let _ = writeln!(page, "### {}\n", operation.heading());
    for part in ["summary", "description"] {
        if let Some(words) = body[part].as_str().filter(|words| !words.is_empty()) {
            let _ = writeln!(page, "{}\n", words.trim_end());
        }
    }
    let secured = body["security"]
        .as_array()
        .is_some_and(|schemes| !schemes.is_empty());
    let _ = writeln!(
        page,
        "Authentication: {}.\n",
        if secured {
            "`Authorization: Bearer <agent key>`"
        } else {
            "none"
        }
    );
    if let Some(parameters) = body["parameters"].as_array().filter(|p| !p.is_empty()) {
        page.push_str("| parameter | in | type | required | meaning |\n|---|---|---|---|---|\n");
        for parameter in parameters {
            let _ = writeln!(
                page,
                "| `{}` | {} | {} | {} | {} |",
                text(&parameter["name"]),
                text(&parameter["in"]),
                type_of(&parameter["schema"]),
                yes_no(parameter["required"].as_bool().unwrap_or(false)),
                cell(&with_constraints(
                    parameter["description"].as_str().unwrap_or_default(),
                    &parameter["schema"]
                ))
            );
        }
        page.push('\n');
    }
    if let Some(schema) = body["requestBody"]["content"]["application/json"]["schema"].as_object() {
        let _ = writeln!(
            page,
            "Request body (JSON): {}.\n",
            type_of(&Value::Object(schema.clone()))
        );
    }
    page.push_str("| status | meaning | body |\n|---|---|---|\n");
    if let Some(responses) = body["responses"].as_object() {
        for (status, response) in responses {
            let schema = &response["content"]["application/json"]["schema"];
            let _ = writeln!(
                page,
                "| {status} | {} | {} |",
                cell(response["description"].as_str().unwrap_or_default()),
                if schema.is_null() {
                    "none".to_owned()
                } else {
                    type_of(schema)
                }
            );
        }
    }
    page.push('\n');
}

/// The MCP tools as `tools/list` describes them (the same use cases, for language-model agents):
/// what the section of the MCP tools says, in Markdown, below its heading.
pub(crate) fn mcp_tools_section(tools: &Value) -> String {
    let mut section = String::from(
        "The same use cases serve agents driven by a language model as MCP tools at `POST /mcp` \
         (Streamable HTTP, stateless, protocol versions 2025-11-25 and 2026-07-28), with the \
         same `Authorization: Bearer <agent key>`; `Host` and `Origin` must name one of \
         `MCP_ALLOWED_HOSTS`. Each tool calls its route's use case with the same rules, limits, \
         idempotency and events. A refusal is a tool result with `isError: true` whose text is \
         the `detail` this API gives and whose structured content is `{\"status\", \"detail\", \
         ...}` (`detail` lists the wrong fields for a 422, `retry_after` comes with a 429). \
         `?tools=a,b` on the URL limits the tools listed and callable. No tool confirms or \
         rejects a transfer: `create_transfer_intent` answers with the intent, the policy's \
         verdict and `approval_url`, where an operator decides.\n\n\
         | tool | title | hints | what it does |\n|---|---|---|---|\n",
    );
    let tools = tools.as_array().map(Vec::as_slice).unwrap_or_default();
    for tool in tools {
        let description = text(&tool["description"]);
        let first = description.split(". ").next().unwrap_or_default();
        let _ = writeln!(
            section,
            "| `{}` | {} | {} | {} |",
            text(&tool["name"]),
            cell(&text(&tool["title"])),
            hints(&tool["annotations"]),
            cell(first.trim_end_matches('.'))
        );
    }
    section.push('\n');
    for tool in tools {
        let _ = writeln!(
            section,
            "### {}\n\n{}\n",
            text(&tool["name"]),
            text(&tool["description"])
        );
        if tool["inputSchema"]["properties"]
            .as_object()
            .is_none_or(|properties| properties.is_empty())
        {
            section.push_str("Arguments: none.\n\n");
            continue;
        }
        section.push_str("| argument | type | required | meaning |\n|---|---|---|---|\n");
        render_fields(&mut section, &tool["inputSchema"]);
        section.push('\n');
    }
    section
}

/// A tool's annotations as words.
fn hints(annotations: &Value) -> String {
    let hint = |name: &str| annotations[name].as_bool();
    let mut words = Vec::new();
    if hint("readOnlyHint") == Some(true) {
        words.push("read-only");
    }
    if hint("destructiveHint") == Some(true) {
        words.push("destructive");
    }
    if hint("destructiveHint") == Some(false) && hint("readOnlyHint") == Some(false) {
        words.push("not destructive");
    }
    if hint("idempotentHint") == Some(true) {
        words.push("idempotent");
    }
    if hint("openWorldHint") == Some(true) {
        words.push("open-world");
    }
    words.join(", ")
}

fn render_schemas(page: &mut String, schemas: &Value) {
    let Some(schemas) = schemas.as_object() else {
        return;
    };
    page.push_str("## Schemas\n\n");
    for (name, schema) in schemas {
        let _ = writeln!(page, "### {name}\n");
        if let Some(description) = schema["description"].as_str() {
            let _ = writeln!(page, "{}\n", description.trim_end());
        }
        // `allOf` is how a shape extends another: name the base, then list the added fields.
        let parts = schema["allOf"]
            .as_array()
            .map_or_else(|| vec![schema], |parts| parts.iter().collect());
        let bases: Vec<String> = parts
            .iter()
            .filter(|part| part.get("$ref").is_some())
            .map(|part| type_of(part))
            .collect();
        if !bases.is_empty() {
            let _ = writeln!(page, "Every field of {}, and:\n", bases.join(", "));
        }
        let objects: Vec<&Value> = parts
            .into_iter()
            .filter(|part| part["properties"].is_object())
            .collect();
        if objects.is_empty() {
            let _ = writeln!(page, "Type: {}.\n", type_with_values(schema));
            continue;
        }
        page.push_str("| field | type | required | meaning |\n|---|---|---|---|\n");
        for object in objects {
            render_fields(page, object);
        }
        page.push('\n');
    }
}

fn render_fields(page: &mut String, object: &Value) {
    let required: Vec<&str> = object["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for (field, property) in object["properties"].as_object().into_iter().flatten() {
        let _ = writeln!(
            page,
            "| `{field}` | {} | {} | {} |",
            type_of(property),
            yes_no(required.contains(&field.as_str())),
            cell(&with_constraints(
                property["description"].as_str().unwrap_or_default(),
                property
            ))
        );
    }
}

/// A schema as a short type expression: `string (uuid)`, `array of [X](#x)`, `T?` when nullable.
fn type_of(schema: &Value) -> String {
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.rsplit('/').next().unwrap_or(reference);
        return format!("[`{name}`](#{})", anchor(name));
    }
    for combinator in ["oneOf", "anyOf"] {
        if let Some(choices) = schema[combinator].as_array() {
            let nullable = choices.iter().any(|choice| choice["type"] == "null");
            let named: Vec<String> = choices
                .iter()
                .filter(|choice| choice["type"] != "null")
                .map(type_of)
                .collect();
            return format!("{}{}", named.join(" or "), if nullable { "?" } else { "" });
        }
    }
    let (kind, nullable) = match &schema["type"] {
        Value::String(kind) => (kind.as_str(), false),
        Value::Array(kinds) => (
            kinds
                .iter()
                .filter_map(Value::as_str)
                .find(|kind| *kind != "null")
                .unwrap_or("null"),
            kinds.iter().any(|kind| kind == "null"),
        ),
        _ => ("any", false),
    };
    let described = match kind {
        "array" => format!("array of {}", type_of(&schema["items"])),
        "string" => match schema["format"].as_str() {
            Some(format) => format!("string ({format})"),
            None => "string".to_owned(),
        },
        other => other.to_owned(),
    };
    if nullable {
        format!("{described}?")
    } else {
        described
    }
}

/// A schema's type, and the values it allows when it names them (an enum).
fn type_with_values(schema: &Value) -> String {
    let kind = type_of(schema);
    match schema["enum"].as_array() {
        Some(values) => {
            let values: Vec<String> = values.iter().map(Value::to_string).collect();
            format!("{kind}, one of {}", values.join(", "))
        }
        None => kind,
    }
}

/// A description followed by what the schema allows beyond its type.
fn with_constraints(description: &str, schema: &Value) -> String {
    let mut notes = Vec::new();
    for (key, label) in [
        ("minimum", "min"),
        ("maximum", "max"),
        ("minLength", "min length"),
        ("maxLength", "max length"),
        ("default", "default"),
    ] {
        if let Some(value) = schema.get(key) {
            notes.push(format!("{label} {value}"));
        }
    }
    if let Some(values) = schema["enum"].as_array() {
        let values: Vec<String> = values.iter().map(Value::to_string).collect();
        notes.push(format!("one of {}", values.join(", ")));
    }
    match (description.trim_end_matches('.'), notes.is_empty()) {
        (description, true) => description.to_owned(),
        ("", false) => capitalised(&notes.join(", ")),
        (description, false) => format!("{description} ({})", notes.join(", ")),
    }
}

/// GitHub's heading anchor: lower case, punctuation dropped, spaces as hyphens.
fn anchor(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c.to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

fn cell(words: &str) -> String {
    words.replace('|', "\\|").replace('\n', " ")
}

fn text(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned)
}

fn capitalised(words: &str) -> String {
    let mut chars = words.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

fn yes_no(yes: bool) -> &'static str {
    if yes {
        "yes"
    } else {
        "no"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn types_read_as_the_contract_writes_them() {
        assert_eq!(type_of(&json!({"type": ["string", "null"]})), "string?");
        assert_eq!(
            type_of(&json!({"type": "string", "format": "uuid"})),
            "string (uuid)"
        );
        assert_eq!(
            type_of(
                &json!({"oneOf": [{"type": "null"}, {"$ref": "#/components/schemas/WalletOut"}]})
            ),
            "[`WalletOut`](#walletout)?"
        );
        assert_eq!(
            type_of(&json!({"type": "array", "items": {"$ref": "#/components/schemas/X"}})),
            "array of [`X`](#x)"
        );
        assert_eq!(type_of(&json!({})), "any");
        assert_eq!(
            type_with_values(&json!({"type": "string", "enum": ["sms", "email"]})),
            r#"string, one of "sms", "email""#
        );
        assert_eq!(type_with_values(&json!({"type": "integer"})), "integer");
    }

    #[test]
    fn constraints_follow_the_description() {
        let limit = json!({"type": "integer", "minimum": 1, "maximum": 100});
        assert_eq!(
            with_constraints("Page size.", &limit),
            "Page size (min 1, max 100)"
        );
        assert_eq!(with_constraints("", &limit), "Min 1, max 100");
        assert_eq!(with_constraints("a | b", &json!({})), "a | b");
        assert_eq!(cell("a | b\nc"), "a \\| b c");
    }

    #[test]
    fn anchors_match_the_headings() {
        assert_eq!(anchor("GET /v1/agents/me"), "get-v1agentsme");
        assert_eq!(anchor("TransferIntentOut"), "transferintentout");
    }

    #[test]
    fn the_committed_page_is_the_rendering_of_the_committed_document() {
        let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
        let read = |name: &str| {
            std::fs::read_to_string(docs.join(name))
                .unwrap_or_else(|error| panic!("docs/{name}: {error}"))
        };
        let document: Value = serde_json::from_str(&read("openapi.json")).expect("JSON");
        assert!(
            read("api.md") == render(&document),
            "docs/api.md is not the rendering of docs/openapi.json: run `make openapi`"
        );
    }
}
