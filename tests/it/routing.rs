//! Unknown routes and wrong methods answer in the error model, as JSON.

use serde_json::json;

use crate::support::harness::{header, read, Server};

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

// Found by the fuzz run (make fuzz): a 405 had no `Allow`, which RFC 9110 requires.
#[tokio::test]
async fn a_wrong_method_names_the_methods_of_the_path_in_allow() {
    let (server, _database) = Server::start().await;
    for (method, path, allowed) in [
        (reqwest::Method::TRACE, "/v1/agents/me", "GET, HEAD"),
        (reqwest::Method::DELETE, "/v1/wallet/send", "POST"),
        (
            reqwest::Method::PUT,
            "/v1/email/messages/some-id",
            "GET, HEAD",
        ),
        (reqwest::Method::GET, "/webhooks/sms/twilio", "POST"),
    ] {
        let response = server
            .client
            .request(method.clone(), server.url(path))
            .send()
            .await
            .expect("request");
        assert_eq!(
            header(&response, "allow").as_deref(),
            Some(allowed),
            "{method} {path}"
        );
        assert_eq!(
            read(response).await,
            (405, json!({"detail": "Method Not Allowed"})),
            "{method} {path}"
        );
    }
}

#[tokio::test]
async fn head_answers_as_get_without_the_body() {
    let (server, database) = Server::start().await;
    let (key, _) = crate::support::harness::create_agent(&database, &[]).await;
    let got = server
        .client
        .get(server.url("/v1/agents/me"))
        .bearer_auth(&key)
        .send()
        .await
        .expect("GET");
    let head = server
        .client
        .head(server.url("/v1/agents/me"))
        .bearer_auth(&key)
        .send()
        .await
        .expect("HEAD");
    assert_eq!(head.status().as_u16(), 200);
    assert_eq!(header(&head, "content-type"), header(&got, "content-type"));
    assert!(head.bytes().await.expect("body").is_empty());
    let keyless = server
        .client
        .head(server.url("/v1/agents/me"))
        .send()
        .await
        .expect("HEAD");
    assert_eq!(
        keyless.status().as_u16(),
        401,
        "HEAD authenticates as GET does"
    );
    let unknown = server
        .client
        .head(server.url("/v1/wallet/send"))
        .send()
        .await
        .expect("HEAD");
    assert_eq!(unknown.status().as_u16(), 405);
}
