#pragma once
// The small state changes every event handler is made of. Each keeps the ticket's invariants
// (counters reset on a phase change, awaiting and handoff set together, pending questions
// cancelled when the ticket closes), so handlers read as the spec's sentences.

#include <board/reduce.hpp>
#include <board/ticket.hpp>

#include <initializer_list>
#include <string>
#include <string_view>

namespace board::ops {

/// Concatenates pieces into one message (the reducer does not depend on fmt).
std::string cat(std::initializer_list<std::string_view> parts);

/// `$1.25`, the same on every machine and locale.
std::string format_usd(double amount);

Rejection reject(RejectReason reason, std::initializer_list<std::string_view> parts);

void add_note(Ticket& t, const Actor& by, std::string text, UnixMillis at);
void add_system_note(Ticket& t, std::string text, UnixMillis at);

/// Moves to `status`; a change of column resets the phase counters.
void enter(Ticket& t, Status status, UnixMillis at);

void await_human(Ticket& t, Awaiting awaiting, Handoff handoff);
/// Back to the agent, unless a pending blocking question still holds the ticket (§6).
void release_to_agent(Ticket& t);

/// Hands the ticket to a human for an escalation the board itself raised, with a note.
void escalate(Ticket& t, std::string why, UnixMillis at);

/// done with `resolution`; pending questions are cancelled.
void close(Ticket& t, Resolution resolution, UnixMillis at);

/// The awaiting type of the final human gate: the ticket's `requires`, else `review`.
Awaiting review_gate(const Ticket& t);

/// The phase is complete: pass through `gate` to the next column, or wait at the gate.
void complete_phase(Ticket& t, Gate gate, bool review_agent, UnixMillis at);

/// A phase's gate passed (approval, review, content, a gate checkpoint): the next column.
void advance(Ticket& t, UnixMillis at);

/// The phase's current artifact, marked rejected so a new run must write it again.
void reject_artifact(Ticket& t, Status phase, UnixMillis at);

/// A failed run (or a COMPLETE without an artifact): attempts + 1, escalate at the limit.
void fail_attempt(Ticket& t, std::string why, int max_attempts, UnixMillis at);

bool has_pending_blocking_question(Ticket& t);

/// The first question that may still be pending: all before it are settled. Loops looking for
/// pending questions start here, so a long answered history costs them nothing.
std::vector<Question>::iterator unsettled_questions(Ticket& t);

/// The last question with this id, or null (an index lookup, not a scan).
Question* find_question(Ticket& t, std::string_view id);

/// An acceptable title, label or id list: non-empty, and ids well-formed and not `self`.
std::optional<Rejection> check_ids(std::string_view self,
                                   std::string_view field,
                                   const std::vector<std::string>& ids);
std::optional<Rejection> check_labels(const std::vector<std::string>& labels);
std::optional<Rejection> check_priority(int priority);

}  // namespace board::ops
