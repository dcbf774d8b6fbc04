//! Structural failures: the history breaks the provider's rules (a tool call
//! without its result, a result without its call, …). The culprits are the
//! orphaned calls and results, not attachments; the remedy is `repair`.

use serde::Serialize;

use crate::classify::{Class, Classification};
use crate::model::{Fault, FaultKind};

use super::{Failure, FailureSource};

/// One structural problem as `diagnose` reports it.
#[derive(Clone, Debug, Serialize)]
pub struct HistoryItem {
    #[serde(flatten)]
    pub problem: Fault,
    /// The provider's error names this call id.
    pub named: bool,
}

/// The problems, those whose call id the provider's error names first, then in history order.
pub fn items(problems: Vec<Fault>, named_ids: &[String]) -> Vec<HistoryItem> {
    let mut items: Vec<HistoryItem> = problems
        .into_iter()
        .map(|mut p| {
            let named =
                p.call_id.as_ref().is_some_and(|id| named_ids.iter().any(|n| n == id || id.starts_with(n.as_str())));
            if named && p.agent_pairs {
                // The provider's refusal names the call: the agent sent it
                // unanswered, whatever it does for calls a run leaves behind.
                p.message = format!(
                    "{} call {} has no result, and the provider's error names it: the agent sent it unanswered; `repair` answers it",
                    p.tool.as_deref().unwrap_or("a tool"),
                    p.call_id.as_deref().unwrap_or("-")
                );
            }
            HistoryItem { problem: p, named }
        })
        .collect();
    // Stable: history order within each part.
    items.sort_by_key(|i| !i.named);
    items
}

/// With no failure recorded: the history alone shows the next request will be
/// rejected (a call still pending is not enough: the agent may be running it;
/// nor is one the agent answers itself when it sends).
pub fn predict(problems: &[Fault], provider: &str) -> Option<Failure> {
    let broken: Vec<&Fault> = problems.iter().filter(|p| !p.pending && !p.agent_pairs).collect();
    if broken.is_empty() {
        return None;
    }
    let c = Classification {
        class: Class::HistoryInvalid,
        retryable: Class::HistoryInvalid.retryable(),
        provider: Some(provider.to_string()),
        status: None,
        code: None,
        kind: None,
        message: Some(summary(&broken)),
        limit: None,
        block: None,
        remedy: Class::HistoryInvalid.remedy(),
        call_ids: broken.iter().filter_map(|p| p.call_id.clone()).collect(),
        why: vec!["no blocking provider error is recorded; predicted from the history's structure".into()],
    };
    Some(Failure { classification: c, line: None, source: FailureSource::Predicted, recovered: false, moved_to: None })
}

/// "2 tool calls without a result, 1 result without a call".
pub fn summary(problems: &[&Fault]) -> String {
    let n = |k: FaultKind| problems.iter().filter(|p| p.kind == k).count();
    let parts = [
        (n(FaultKind::CallWithoutResult), "tool call without a result", "tool calls without a result"),
        (n(FaultKind::ResultWithoutCall), "tool result without its call", "tool results without their call"),
        (n(FaultKind::DuplicateResult), "second result for one call", "results past the one each call takes"),
        (n(FaultKind::EmptyMessage), "empty message", "empty messages"),
        (n(FaultKind::RolesOutOfOrder), "message out of order", "messages out of order"),
    ];
    let said: Vec<String> = parts
        .iter()
        .filter(|(k, _, _)| *k > 0)
        .map(|(k, one, many)| format!("{k} {}", if *k == 1 { one } else { many }))
        .collect();
    format!("the history breaks the provider's rules: {}", said.join(", "))
}
