//! Unknown routes and wrong methods answer in the error model, as JSON.

use serde_json::json;

use crate::harness::{read, Server};

#[tokio::test]
async fn an_unknown_route_is_a_json_404() {
    let (server, _database) = Server::start().await;
    for path in [
        "/nope",
        "/v1/agents",
        "/v1/agents/me/extra",
        "/v2/agents/me",
    ] {
        assert_eq!(
            server.get(path, None).await,
            (404, json!({"detail": "Not Found"})),
            "{path}"
        );
    }
}

#[tokio::test]
async fn a_wrong_method_is_a_json_405() {
    let (server, _database) = Server::start().await;
    for method in [
        reqwest::Method::POST,
        reqwest::Method::PUT,
        reqwest::Method::DELETE,
        reqwest::Method::PATCH,
    ] {
        let response = server
            .client
            .request(method.clone(), server.url("/v1/agents/me"))
            .send()
            .await
            .expect("request");
        assert_eq!(
            read(response).await,
            (405, json!({"detail": "Method Not Allowed"})),
            "{method}"
        );
    }
}
