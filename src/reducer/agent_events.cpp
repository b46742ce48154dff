// Events that record what happened: a ticket created, an agent run started and finished, an
// artifact written, a note. The rules of §3 and §4 of the spec live here.

#include "reducer/handlers.hpp"
#include "reducer/rules.hpp"
#include "reducer/ticket_ops.hpp"

#include <algorithm>
#include <string>

namespace board::handlers {
namespace {

using ops::cat;
using ops::reject;

bool is_safe_relative_path(std::string_view path) {
    if (path.empty() || path.front() == '/' || path.find('\0') != std::string_view::npos)
        return false;
    std::size_t start = 0;
    while (start <= path.size()) {
        const auto end = std::min(path.find('/', start), path.size());
        if (path.substr(start, end - start) == "..") return false;
        start = end + 1;
    }
    return true;
}

bool is_sha256_hex(std::string_view digest) {
    return digest.size() == 64 && std::all_of(digest.begin(), digest.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

/// The phase a run of `phase` may start from the ticket's column, if any.
bool run_may_start(Status column, Status phase) {
    if (!is_agent_phase(phase)) return false;
    return column == phase || (column == Status::backlog && phase == Status::research) ||
           (column == Status::ready && phase == Status::planning);
}

std::string describe_failure(const RunFinished& r, std::string_view phase) {
    if (r.timed_out) return cat({phase, " run ", r.run, " timed out and was stopped"});
    if (r.exit_code == 0) return cat({phase, " run ", r.run, " failed: ", r.error});
    const std::string status =
        cat({phase, " run ", r.run, " exited with status ", std::to_string(r.exit_code)});
    return r.error.empty() ? status : cat({status, ": ", r.error});
}

void apply_signal(Ticket& t, const RunFinished& r, const RunPolicy& policy, UnixMillis at) {
    const std::string_view phase = to_string(t.status);
    if (!r.signal) {
        ++t.phase_iterations;
        if (t.phase_iterations >= policy.max_iterations) {
            ops::escalate(t,
                          cat({phase,
                               ": no signal after ",
                               std::to_string(t.phase_iterations),
                               " iteration(s), the limit"}),
                          at);
        }
        return;
    }
    const auto& rule = rules::rule_for(*r.signal);
    if (rule.awaiting) {
        if (rule.implementing_moves_to_review && t.status == Status::implementing)
            ops::enter(t, Status::review, at);
        ops::await_human(t, *rule.awaiting, Handoff::signal);
        return;
    }
    const auto kind = artifact_of(t.status);
    const bool artifact_complete =
        kind && t.artifact(*kind) && t.artifact(*kind)->status == ArtifactStatus::complete;
    if (!artifact_complete) {
        const std::string_view artifact = kind ? to_string(*kind) : "its artifact";
        const bool written = kind && t.artifact(*kind);
        ops::fail_attempt(
            t,
            cat({phase,
                 " run ",
                 r.run,
                 " signalled COMPLETE but ",
                 artifact,
                 " is not recorded complete: ",
                 written
                     ? cat({"its front matter does not say status: complete"})
                     : cat({"the agent wrote no ", artifact, " file (could it write there?)"})}),
            policy.max_attempts,
            at);
        return;
    }
    ops::complete_phase(t, policy.gate, policy.review_agent, at);
}

}  // namespace

Outcome apply(Ticket& t, const Event& e, const Created& c) {
    if (!is_valid_ticket_id(c.ticket)) {
        return reject(RejectReason::invalid_field,
                      {"created: \"", c.ticket, "\" is not a ticket id (expected PREFIX-N)"});
    }
    if (c.title.empty())
        return reject(RejectReason::invalid_field, {"created: the title is empty"});
    if (auto bad = ops::check_priority(c.priority)) return *bad;
    if (auto bad = ops::check_labels(c.labels)) return *bad;
    if (auto bad = ops::check_ids(c.ticket, "blocked_by", c.blocked_by)) return *bad;
    if (!c.parent.empty()) {
        if (auto bad = ops::check_ids(c.ticket, "parent", {c.parent})) return *bad;
    }
    if (c.requires_ && *c.requires_ != Awaiting::approval && *c.requires_ != Awaiting::review &&
        *c.requires_ != Awaiting::content) {
        return reject(
            RejectReason::invalid_field,
            {"requires: must be approval, review or content, not ", to_string(*c.requires_)});
    }
    t.id = c.ticket;
    t.title = c.title;
    t.description = c.description;
    t.type = c.kind;
    t.priority = c.priority;
    t.labels = c.labels;
    t.parent = c.parent;
    t.blocked_by = c.blocked_by;
    t.requires_ = c.requires_;
    t.status = Status::backlog;
    t.created_at = e.at;
    t.phase_started_at = e.at;
    if (c.awaiting) {
        ops::await_human(t, *c.awaiting, Handoff::signal);
    } else if (c.manual) {
        ops::await_human(t, Awaiting::work, Handoff::signal);  // legacy `manual: true`
    }
    return std::nullopt;
}

Outcome apply(Ticket& t, const Event& e, const RunStarted& r) {
    if (r.run.empty())
        return reject(RejectReason::invalid_field, {"run-started: the run id is empty"});
    if (t.type == TicketType::epic) {
        return reject(RejectReason::wrong_status, {t.id, " is an epic: epics are never run"});
    }
    if (t.run) {
        return reject(RejectReason::run_in_flight,
                      {t.id, " already has run ", t.run->id, " in flight"});
    }
    if (t.awaiting) {
        return reject(RejectReason::awaiting_human,
                      {t.id, " is awaiting a human (", to_string(*t.awaiting), "), not an agent"});
    }
    if (!run_may_start(t.status, r.phase)) {
        return reject(RejectReason::wrong_status,
                      {"cannot start a ",
                       to_string(r.phase),
                       " run: ",
                       t.id,
                       " is in ",
                       to_string(t.status)});
    }
    if (!r.branch.empty() && r.branch != ticket_branch(t.id)) {
        return reject(
            RejectReason::invalid_field,
            {"run-started: a run of ", t.id, " works on board/", t.id, ", not ", r.branch});
    }
    ops::enter(t, r.phase, e.at);
    t.run = Run{r.run, r.phase, e.at, r.policy};
    if (!r.branch.empty()) t.branch = r.branch;
    ++t.runs_total;
    return std::nullopt;
}

Outcome apply(Ticket& t, const Event& e, const RunFinished& r) {
    if (!t.run || t.run->id != r.run) {
        return reject(RejectReason::unknown_run,
                      {"run-finished: ", r.run, " is not the run in flight on ", t.id});
    }
    if (!(r.cost_usd >= 0.0)) {
        return reject(RejectReason::invalid_field, {"run-finished: cost_usd must be 0 or more"});
    }
    const Run run = *t.run;
    t.run.reset();
    t.last_run_ended_at = e.at;
    t.cost_usd += r.cost_usd;
    if (!r.session.empty()) t.last_session = r.session;
    const std::string_view phase = to_string(run.phase);
    if (!r.context.empty())
        ops::add_note(t, Actor{ActorKind::agent, std::string{phase}}, r.context, e.at);

    // A human moved the ticket or took it over while the agent ran: the agent's words are
    // kept as a note, but its outcome no longer applies to where the ticket is. A ticket that
    // left the phase and came back (move and start, cancel and reopen) re-entered it after
    // the run started.
    // A blocking question the agent asked during this run holds the ticket: its answer is
    // what the phase needs next, so the phase runs again once it is answered.
    const bool asked_in_run =
        t.awaiting && t.handoff == Handoff::question &&
        std::any_of(ops::unsettled_questions(t), t.questions.end(), [&](const Question& q) {
            return q.status == QuestionStatus::pending && q.kind != QuestionKind::non_blocking &&
                   q.asked_at >= run.started_at;
        });
    const bool moved_on = t.status != run.phase || (t.awaiting && !asked_in_run) ||
                          t.phase_started_at > run.started_at;
    if (asked_in_run && !moved_on) {
        ops::add_system_note(t,
                             cat({phase,
                                  " run ",
                                  r.run,
                                  " asked a blocking question: the ticket waits for the answer, "
                                  "then the phase runs again"}),
                             e.at);
        return std::nullopt;
    }
    if (moved_on) {
        ops::add_system_note(t,
                             cat({phase,
                                  " run ",
                                  r.run,
                                  " ended after the ticket moved on (now ",
                                  to_string(t.status),
                                  t.awaiting ? ", awaiting a human" : "",
                                  "); its outcome is not applied"}),
                             e.at);
        return std::nullopt;
    }
    if (r.timed_out || r.exit_code != 0 || !r.error.empty()) {
        if (r.permanent) {
            ++t.phase_attempts;
            t.last_failure_at = e.at;
            ops::escalate(
                t,
                cat({describe_failure(r, phase), " (a failure that retrying cannot fix)"}),
                e.at);
        } else {
            ops::fail_attempt(t, describe_failure(r, phase), run.policy.max_attempts, e.at);
        }
    } else {
        apply_signal(t, r, run.policy, e.at);
    }
    const double budget = run.policy.max_cost_usd;
    if (budget > 0 && t.cost_usd >= budget && t.status != Status::done) {
        const std::string why = cat({"budget exhausted: ",
                                     ops::format_usd(t.cost_usd),
                                     " spent of ",
                                     ops::format_usd(budget)});
        if (t.awaiting) {
            ops::add_system_note(t, why, e.at);  // a human is awaited already
        } else {
            ops::escalate(t, why, e.at);
        }
    }
    return std::nullopt;
}

Outcome apply(Ticket& t, const Event& e, const RunInterrupted& r) {
    if (!t.run || t.run->id != r.run) {
        return reject(RejectReason::unknown_run,
                      {"run-interrupted: ", r.run, " is not the run in flight on ", t.id});
    }
    ops::add_system_note(t,
                         cat({to_string(t.run->phase),
                              " run ",
                              r.run,
                              " was interrupted",
                              r.reason.empty() ? "" : ": ",
                              r.reason}),
                         e.at);
    t.run.reset();
    t.last_run_ended_at = e.at;
    return std::nullopt;
}

Outcome apply(Ticket& t, const Event& e, const ArtifactRecorded& a) {
    if (!is_safe_relative_path(a.path)) {
        return reject(
            RejectReason::invalid_field,
            {"artifact-recorded: path \"", a.path, "\" must stay inside the ticket folder"});
    }
    if (!a.sha256.empty() && !is_sha256_hex(a.sha256)) {
        return reject(RejectReason::invalid_field,
                      {"artifact-recorded: sha256 must be 64 lowercase hex digits"});
    }
    auto& slot = t.artifact(a.kind);
    const UnixMillis created = slot ? slot->created_at : e.at;
    slot = Artifact{a.path, a.status, a.summary, a.sha256, created, e.at};

    // §3: a complete artifact completes its phase, whoever recorded it. Inside a run the
    // run's COMPLETE decides, so only an artifact recorded outside a run acts here.
    const bool completes = a.status == ArtifactStatus::complete && !t.run && !t.awaiting &&
                           artifact_of(t.status) == a.kind;
    if (completes) {
        ops::complete_phase(t, a.gate.value_or(rules::default_gate(t.status)), true, e.at);
    }
    return std::nullopt;
}

Outcome apply(Ticket& t, const Event& e, const NoteAdded& n) {
    if (n.text.empty()) return reject(RejectReason::invalid_field, {"note: the text is empty"});
    ops::add_note(t, e.by, n.text, e.at);
    return std::nullopt;
}

Outcome apply(Ticket& t, const Event& e, const Forked& f) {
    if (!is_valid_ticket_id(f.ticket) || !is_valid_ticket_id(f.from)) {
        return reject(RejectReason::invalid_field, {"forked: ticket and from must be ticket ids"});
    }
    if (f.from != t.id || f.at_seq != e.seq - 1) {
        return reject(RejectReason::invalid_field,
                      {"forked: the marker must follow seq ",
                       std::to_string(e.seq - 1),
                       " of ",
                       t.id,
                       " (it says ",
                       f.from,
                       " at ",
                       std::to_string(f.at_seq),
                       ")"});
    }
    t.id = f.ticket;
    // The original's branch is the original's: the fork's work, if any, gets its own.
    t.branch.clear();
    t.ship_owed = false;
    t.shipped.reset();
    if (t.run) {
        ops::add_system_note(t, cat({"the fork does not inherit run ", t.run->id}), e.at);
        t.run.reset();
    }
    ops::add_system_note(
        t, cat({"forked from ", f.from, " at seq ", std::to_string(f.at_seq)}), e.at);
    return std::nullopt;
}

namespace {

/// Shipping is the daemon's to record, for a done ticket that owes it, on its own branch.
std::optional<Rejection> may_ship(const Ticket& t,
                                  const Event& e,
                                  std::string_view what,
                                  const std::string& branch) {
    if (e.by.kind != ActorKind::system) {
        return reject(
            RejectReason::not_human,
            {what, ": only the board records shipping (this event is by ", to_string(e.by), ")"});
    }
    if (t.status != Status::done || !t.ship_owed) {
        return reject(RejectReason::nothing_to_do,
                      {what, ": ", t.id, " owes no shipping (status ", to_string(t.status), ")"});
    }
    if (branch != t.branch) {
        return reject(RejectReason::invalid_field,
                      {what, ": ", t.id, "'s branch is ", t.branch, ", not ", branch});
    }
    return std::nullopt;
}

}  // namespace

Outcome apply(Ticket& t, const Event& e, const Shipped& s) {
    if (auto bad = may_ship(t, e, "shipped", s.branch)) return *bad;
    t.ship_owed = false;
    t.shipped = Shipment{s.how, s.branch, s.ref, e.at};
    return std::nullopt;
}

Outcome apply(Ticket& t, const Event& e, const ShipFailed& f) {
    if (auto bad = may_ship(t, e, "ship-failed", f.branch)) return *bad;
    // Back to the last human step before shipping, for a person to put right; their next
    // approval makes it done, and owed its shipping, again.
    t.resolution.reset();
    t.ship_owed = false;
    ops::enter(t, Status::review, e.at);
    ops::add_system_note(t, cat({"shipping ", f.branch, " failed: ", f.reason}), e.at);
    ops::await_human(t, Awaiting::work, Handoff::system);
    return std::nullopt;
}

}  // namespace board::handlers
