#pragma once
// The wire schema: every model struct's JSON fields, in the order they are written. One
// describe() per struct drives both encoding and decoding (json_io.hpp has the vocabulary),
// so this file is the one place to read, or change, what events.jsonl and ticket.json hold.
// Adding a field: append it here (old readers ignore unknown keys), then add it to the samples
// in codec_test.cpp.

#include "json_io.hpp"

#include <board/event.hpp>
#include <board/ticket.hpp>

namespace board::codec_detail {

// ---------------------------------------------------------------------------------------------
// Shared by events and tickets

template <class IO, Is<RunPolicy> S>
void describe(IO& io, S& p) {
    io.required("gate", p.gate);
    io.required("max_iterations", p.max_iterations);
    io.required("max_attempts", p.max_attempts);
    io.required("max_cost_usd", p.max_cost_usd);
    io.required("review_agent", p.review_agent);
}

template <class IO, Is<QuestionOption> S>
void describe(IO& io, S& o) {
    io.identity("id", o.id);
    io.optional("label", o.label);
    io.optional("value", o.value);
    io.optional("description", o.description);
}

// ---------------------------------------------------------------------------------------------
// Event payloads: their fields follow the envelope's `type` in the same object.

template <class IO, Is<Created> S>
void describe(IO& io, S& e) {
    io.identity("ticket", e.ticket);
    io.required("title", e.title);
    io.optional("description", e.description);
    io.optional("ticket_type", e.kind);  // `type` is the event's own
    io.optional("priority", e.priority);
    io.optional("labels", e.labels);
    io.optional("parent", e.parent);
    io.optional("blocked_by", e.blocked_by);
    io.optional("requires", e.requires_);
    io.optional("awaiting", e.awaiting);
    io.unless_default("manual", e.manual);  // legacy input only: nothing new sets it
}

template <class IO, Is<RunStarted> S>
void describe(IO& io, S& e) {
    io.identity("run", e.run);
    io.required("phase", e.phase);
    io.required("attempt", e.attempt);
    io.required("iteration", e.iteration);
    io.required("policy", e.policy);
    io.optional("branch", e.branch);
}

template <class IO, Is<RunFinished> S>
void describe(IO& io, S& e) {
    io.identity("run", e.run);
    io.required("exit", e.exit_code);
    io.optional("timed_out", e.timed_out);
    io.optional("error", e.error);
    io.unless_default("permanent", e.permanent);
    io.optional("duration_ms", e.duration_ms);
    io.required("cost_usd", e.cost_usd);
    io.unless_default("input_tokens", e.input_tokens);
    io.unless_default("output_tokens", e.output_tokens);
    io.unless_default("cache_read_tokens", e.cache_read_tokens);
    io.unless_default("cache_write_tokens", e.cache_write_tokens);
    io.optional("session", e.session);
    io.optional("signal", e.signal);
    io.optional("context", e.context);
}

template <class IO, Is<RunInterrupted> S>
void describe(IO& io, S& e) {
    io.identity("run", e.run);
    io.optional("reason", e.reason);
}

template <class IO, Is<ArtifactRecorded> S>
void describe(IO& io, S& e) {
    io.required("kind", e.kind);
    io.identity("path", e.path);
    io.required("status", e.status);
    io.optional("summary", e.summary);
    io.optional("sha256", e.sha256);
    io.optional("gate", e.gate);
}

template <class IO, Is<NoteAdded> S>
void describe(IO& io, S& e) {
    io.required("text", e.text);
}

template <class IO, Is<VerdictGiven> S>
void describe(IO& io, S& e) {
    io.required("verdict", e.verdict);
    io.optional("note", e.note);
}

template <class IO, Is<QuestionAsked> S>
void describe(IO& io, S& e) {
    io.identity("question", e.question_id);
    io.required("text", e.question);
    io.required("kind", e.kind);
    io.required("response_type", e.response_type);
    io.optional("options", e.options);
    io.optional("context", e.context);
    io.optional("timeout_minutes", e.timeout_minutes);
    io.optional("default_response", e.default_response);
}

template <class IO, Is<QuestionAnswered> S>
void describe(IO& io, S& e) {
    io.identity("question", e.question_id);
    io.required("value", e.value);
    io.optional("note", e.note);
}

template <class IO, Is<QuestionTimedOut> S>
void describe(IO& io, S& e) {
    io.identity("question", e.question_id);
}

template <class IO, Is<Updated> S>
void describe(IO& io, S& e) {
    io.optional("title", e.title);
    io.optional("description", e.description);
    io.optional("priority", e.priority);
    io.optional("labels", e.labels);
    io.optional("parent", e.parent);
    io.optional("blocked_by", e.blocked_by);
    io.clearable("requires", e.requires_);
    io.clearable("awaiting", e.awaiting);
}

template <class IO, Is<Started> S>
void describe(IO& /*io*/, S& /*e*/) {}

template <class IO, Is<Moved> S>
void describe(IO& io, S& e) {
    io.required("status", e.to);
    io.optional("reason", e.reason);
}

template <class IO, Is<Cancelled> S>
void describe(IO& io, S& e) {
    io.optional("reason", e.reason);
}

template <class IO, Is<Reopened> S>
void describe(IO& io, S& e) {
    io.optional("reason", e.reason);
}

template <class IO, Is<Forked> S>
void describe(IO& io, S& e) {
    io.identity("from", e.from);
    io.identity("at_seq", e.at_seq);
    io.identity("ticket", e.ticket);
}

template <class IO, Is<Shipped> S>
void describe(IO& io, S& e) {
    io.required("how", e.how);
    io.required("branch", e.branch);
    io.optional("ref", e.ref);
}

template <class IO, Is<ShipFailed> S>
void describe(IO& io, S& e) {
    io.required("branch", e.branch);
    io.required("reason", e.reason);
}

template <class IO, Is<QuestionCancelled> S>
void describe(IO& io, S& e) {
    io.required("question", e.question_id);
    io.optional("reason", e.reason);
}

template <class IO, Is<HandoffReminded> S>
void describe(IO& io, S& e) {
    io.required("awaiting", e.awaiting);
    io.required("reminder", e.reminder);
}

template <class IO, Is<HandoffEscalated> S>
void describe(IO& io, S& e) {
    io.required("awaiting", e.awaiting);
    io.required("to", e.to);
}

// ---------------------------------------------------------------------------------------------
// The ticket snapshot (state-machine.md §2). Read by a lenient Reader: see decode_ticket.

template <class IO, Is<Artifact> S>
void describe(IO& io, S& a) {
    io.identity("path", a.path);
    io.required("status", a.status);
    io.required("summary", a.summary);
    io.required("sha256", a.sha256);
    io.required("created_at", Time{a.created_at});
    io.required("updated_at", Time{a.updated_at});
}

template <class IO, Is<Note> S>
void describe(IO& io, S& n) {
    io.required("from", n.from);
    io.required("author", n.author);
    io.required("text", n.text);
    io.required("at", Time{n.at});
}

template <class IO, Is<Question> S>
void describe(IO& io, S& q) {
    io.identity("id", q.id);
    io.required("question", q.question);
    io.required("kind", q.kind);
    io.required("response_type", q.response_type);
    io.required("options", q.options);
    io.required("context", q.context);
    io.optional("default_response", q.default_response);
    io.required("asked_at", Time{q.asked_at});
    io.optional("timeout_at", Time{q.timeout_at});
    io.required("status", q.status);
    // Omitted until answered, so a pending question does not read as answered by `system`.
    io.unless_default("answer", q.answer);
    io.unless_default("answered_by", q.answered_by);
    io.unless_default("answered_at", Time{q.answered_at});
}

template <class IO, Is<Run> S>
void describe(IO& io, S& r) {
    io.identity("id", r.id);
    io.required("phase", r.phase);
    io.required("started_at", Time{r.started_at});
    io.required("policy", r.policy);
}

template <class IO, Is<Shipment> S>
void describe(IO& io, S& s) {
    io.required("how", s.how);
    io.required("branch", s.branch);
    io.optional("ref", s.ref);
    io.required("at", Time{s.at});
}

template <class IO, Is<Ticket> S>
void describe(IO& io, S& t) {
    io.identity("id", t.id);
    io.required("title", t.title);
    io.required("description", t.description);
    io.required("type", t.type);
    io.required("priority", t.priority);
    io.required("labels", t.labels);
    io.required("parent", t.parent);
    io.required("blocked_by", t.blocked_by);
    io.required("status", t.status);
    io.optional("resolution", t.resolution);
    io.optional("awaiting", t.awaiting);
    io.required("handoff", t.handoff);
    // Omitted while unset, so a snapshot written before service levels reads the same.
    io.unless_default("awaiting_since", Time{t.awaiting_since});
    io.unless_default("reminders", t.reminders);
    io.unless_default("reminded_at", Time{t.reminded_at});
    io.unless_default("escalated_at", Time{t.escalated_at});
    io.unless_default("escalated_to", t.escalated_to);
    io.optional("requires", t.requires_);
    io.required("artifacts", t.artifacts);
    io.required("notes", t.notes);
    io.required("questions", t.questions);
    io.required("phase_attempts", t.phase_attempts);
    io.required("phase_iterations", t.phase_iterations);
    io.required("phase_started_at", Time{t.phase_started_at});
    io.optional("last_failure_at", Time{t.last_failure_at});
    io.optional("run", t.run);
    io.unless_default("last_run_ended_at", Time{t.last_run_ended_at});
    io.required("last_session", t.last_session);
    io.required("cost_usd", t.cost_usd);
    io.required("runs_total", t.runs_total);
    io.optional("branch", t.branch);
    io.unless_default("ship_owed", t.ship_owed);
    io.optional("shipped", t.shipped);
    io.required("created_at", Time{t.created_at});
    io.required("updated_at", Time{t.updated_at});
    io.required("seq", t.seq);
}

}  // namespace board::codec_detail
