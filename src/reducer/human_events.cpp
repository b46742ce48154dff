// Human moves: verdicts (§5, interpreted from rules::verdict_rules), field updates, start,
// move back, cancel, reopen. Provenance is checked first: an agent can never approve its own
// work, answer for a human, cancel, or lift a gate.

#include "reducer/handlers.hpp"
#include "reducer/rules.hpp"
#include "reducer/ticket_ops.hpp"

#include <algorithm>
#include <string>

namespace board::handlers {
namespace {

using ops::cat;
using ops::reject;

std::optional<Rejection> require_human(const Ticket& t, const Event& e, std::string_view what) {
    if (e.by.kind == ActorKind::human) return std::nullopt;
    return reject(
        RejectReason::not_human,
        {"only a human can ", what, " ", t.id, " (this event is by ", to_string(e.by), ")"});
}

std::optional<Rejection> refuse_agent(const Ticket& t, const Event& e, std::string_view what) {
    if (e.by.kind != ActorKind::agent) return std::nullopt;
    return require_human(t, e, what);
}

/// Back to the agent in the phase to do it again with the human's feedback.
void redo(Ticket& t, UnixMillis at) {
    const Status phase = t.status == Status::review ? Status::implementing : t.status;
    if (t.status == Status::review) ops::reject_artifact(t, Status::review, at);
    ops::enter(t, phase, at);
    ops::reject_artifact(t, phase, at);
    ops::release_to_agent(t);
    ++t.phase_attempts;
}

/// The human did the phase's work: complete it, skipping its gate.
void complete_by_human(Ticket& t, UnixMillis at) {
    ops::release_to_agent(t);
    switch (t.status) {
        case Status::backlog:
        case Status::ready:
        case Status::implementing:
        case Status::review:
            ops::close(t, Resolution::completed, at);
            return;
        default:
            ops::advance(t, at);
            return;
    }
}

void apply_verdict_effect(Ticket& t, rules::VerdictEffect effect, UnixMillis at) {
    using rules::VerdictEffect;
    switch (effect) {
        case VerdictEffect::advance:
            ops::advance(t, at);
            return;
        case VerdictEffect::complete_without_gate:
            complete_by_human(t, at);
            return;
        case VerdictEffect::back_to_agent:
            ops::release_to_agent(t);
            return;
        case VerdictEffect::back_to_agent_reset:
            ops::release_to_agent(t);
            t.phase_attempts = 0;
            t.phase_iterations = 0;
            t.last_failure_at.reset();
            return;
        case VerdictEffect::redo:
            redo(t, at);
            return;
        case VerdictEffect::close_wont_do:
            ops::close(t, Resolution::wont_do, at);
            return;
    }
}

bool is_final_gate_type(Awaiting a) {
    return a == Awaiting::approval || a == Awaiting::review || a == Awaiting::content;
}

}  // namespace

Outcome apply(Ticket& t, const Event& e, const VerdictGiven& v) {
    const bool approving = v.verdict == Verdict::approved;
    if (auto bad = require_human(t, e, approving ? "approve" : "reject")) return *bad;
    if (!t.awaiting) {
        return reject(RejectReason::not_awaiting,
                      {t.id, " is not awaiting a human (status ", to_string(t.status), ")"});
    }
    if (t.handoff == Handoff::question) {
        const auto pending =
            std::find_if(t.questions.begin(), t.questions.end(), [](const auto& q) {
                return q.status == QuestionStatus::pending && q.kind != QuestionKind::non_blocking;
            });
        return reject(RejectReason::answer_required,
                      {t.id,
                       " is waiting for an answer to question ",
                       t.id,
                       ".",
                       pending == t.questions.end() ? "?" : pending->id,
                       ": use `board answer`"});
    }
    if (approving && *t.awaiting == Awaiting::input && v.note.empty()) {
        return reject(RejectReason::feedback_required,
                      {"approving ", t.id, "'s request for input needs the answer as the note"});
    }
    if (!approving && v.note.empty()) {
        return reject(RejectReason::feedback_required,
                      {"rejecting ", t.id, " needs feedback: an agent cannot act on a bare no"});
    }
    if (!v.note.empty()) ops::add_note(t, e.by, v.note, e.at);

    const auto& rule = rules::rule_for(*t.awaiting);
    // §3: an awaiting set by a gate is passed by approving it, whatever its type.
    const auto effect = approving && t.handoff == Handoff::gate ? rules::VerdictEffect::advance
                        : approving                             ? rule.approved
                                                                : rule.rejected;
    // §2: no agent signal clears `requires`. Approving what an agent asked for in review
    // leads to the declared final gate, not past it.
    const bool skips_required_gate = effect == rules::VerdictEffect::advance &&
                                     t.status == Status::review && t.requires_ &&
                                     t.handoff != Handoff::gate && *t.awaiting != *t.requires_;
    if (skips_required_gate) {
        ops::await_human(t, *t.requires_, Handoff::gate);
        return std::nullopt;
    }
    apply_verdict_effect(t, effect, e.at);
    return std::nullopt;
}

Outcome apply(Ticket& t, const Event& e, const Updated& u) {
    if (u.requires_) {
        if (auto bad = require_human(t, e, "change the required gate of")) return *bad;
        if (*u.requires_ && !is_final_gate_type(**u.requires_)) {
            return reject(RejectReason::invalid_field,
                          {"requires: must be approval, review, content or none, not ",
                           to_string(**u.requires_)});
        }
    }
    if (u.awaiting) {
        // Agents hand work over with a signal; an edit must never lift or bypass a gate.
        if (auto bad = refuse_agent(t, e, "change whose turn it is on")) return *bad;
        if (t.status == Status::done) {
            return reject(RejectReason::wrong_status, {t.id, " is done: nobody is awaited"});
        }
    }
    if (u.title && u.title->empty())
        return reject(RejectReason::invalid_field, {"title: is empty"});
    if (u.priority) {
        if (auto bad = ops::check_priority(*u.priority)) return *bad;
    }
    if (u.labels) {
        if (auto bad = ops::check_labels(*u.labels)) return *bad;
    }
    if (u.blocked_by) {
        if (auto bad = ops::check_ids(t.id, "blocked_by", *u.blocked_by)) return *bad;
    }
    if (u.parent && !u.parent->empty()) {
        if (auto bad = ops::check_ids(t.id, "parent", {*u.parent})) return *bad;
    }
    const bool changes_something = u.title || u.description || u.priority || u.labels || u.parent ||
                                   u.blocked_by || u.requires_ || u.awaiting;
    if (!changes_something)
        return reject(RejectReason::nothing_to_do, {"update: no field to change"});

    if (u.title) t.title = *u.title;
    if (u.description) t.description = *u.description;
    if (u.priority) t.priority = *u.priority;
    if (u.labels) t.labels = *u.labels;
    if (u.parent) t.parent = *u.parent;
    if (u.blocked_by) t.blocked_by = *u.blocked_by;
    if (u.requires_) t.requires_ = *u.requires_;
    if (u.awaiting) {
        if (*u.awaiting) {
            ops::await_human(t, **u.awaiting, Handoff::signal);
        } else {
            ops::release_to_agent(t);
        }
    }
    return std::nullopt;
}

Outcome apply(Ticket& t, const Event& e, const Started&) {
    if (auto bad = refuse_agent(t, e, "start")) return *bad;
    if (t.type == TicketType::epic) {
        return reject(RejectReason::wrong_status, {t.id, " is an epic: epics are never run"});
    }
    if (t.status != Status::backlog && t.status != Status::ready) {
        return reject(
            RejectReason::wrong_status,
            {t.id, " is in ", to_string(t.status), "; only backlog or ready work can be started"});
    }
    ops::release_to_agent(t);
    ops::enter(t, rules::advance_to[static_cast<std::size_t>(t.status)], e.at);
    return std::nullopt;
}

Outcome apply(Ticket& t, const Event& e, const Moved& m) {
    if (auto bad = refuse_agent(t, e, "move")) return *bad;
    if (m.reason.empty())
        return reject(RejectReason::invalid_field, {"move: a reason is required"});
    if (t.status == Status::done) {
        return reject(RejectReason::wrong_status, {t.id, " is done: use reopen"});
    }
    if (m.to >= t.status) {
        return reject(RejectReason::wrong_status,
                      {"move: ",
                       to_string(m.to),
                       " is not earlier than ",
                       to_string(t.status),
                       " (moves go back; work moves forward through its phases)"});
    }
    ops::add_note(t, e.by, cat({"moved back to ", to_string(m.to), ": ", m.reason}), e.at);
    ops::release_to_agent(t);
    ops::reject_artifact(t, t.status, e.at);
    ops::reject_artifact(t, m.to, e.at);  // the phase is redone: its old artifact no longer counts
    ops::enter(t, m.to, e.at);
    return std::nullopt;
}

Outcome apply(Ticket& t, const Event& e, const Cancelled& c) {
    if (auto bad = require_human(t, e, "cancel")) return *bad;
    if (t.status == Status::done) {
        return reject(RejectReason::wrong_status, {t.id, " is already done"});
    }
    if (!c.reason.empty()) ops::add_note(t, e.by, cat({"cancelled: ", c.reason}), e.at);
    ops::close(t, Resolution::wont_do, e.at);
    return std::nullopt;
}

Outcome apply(Ticket& t, const Event& e, const Reopened& r) {
    if (auto bad = refuse_agent(t, e, "reopen")) return *bad;
    if (t.status != Status::done) {
        return reject(RejectReason::wrong_status,
                      {t.id, " is not done (status ", to_string(t.status), ")"});
    }
    if (!r.reason.empty()) ops::add_note(t, e.by, cat({"reopened: ", r.reason}), e.at);
    t.resolution.reset();
    // Reopened work ships again when it is done again.
    t.ship_owed = false;
    t.shipped.reset();
    ops::release_to_agent(t);
    ops::enter(t, Status::backlog, e.at);
    return std::nullopt;
}

}  // namespace board::handlers
