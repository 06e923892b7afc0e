//! (in progress)

use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};

pub async fn page(State(_state): State<Arc<crate::web::WebState>>) -> Response {
    "".into_response()
}
