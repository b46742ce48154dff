#pragma once
// One handler per event kind. reduce() has checked the envelope (created first, seq
// contiguous) before any handler runs; each handler checks the rest before it changes anything,
// then changes the ticket in place. Leaving out a handler for a new event is a compile error.

#include <board/event.hpp>
#include <board/reduce.hpp>

namespace board::handlers {

/// nullopt: accepted (the ticket was changed in place); else why not (the ticket is untouched).
using Outcome = std::optional<Rejection>;

// Agent-side facts (agent_events.cpp).
Outcome apply(Ticket& t, const Event& e, const Created& c);
Outcome apply(Ticket& t, const Event& e, const RunStarted& r);
Outcome apply(Ticket& t, const Event& e, const RunFinished& r);
Outcome apply(Ticket& t, const Event& e, const RunInterrupted& r);
Outcome apply(Ticket& t, const Event& e, const ArtifactRecorded& a);
Outcome apply(Ticket& t, const Event& e, const NoteAdded& n);
Outcome apply(Ticket& t, const Event& e, const Forked& f);
Outcome apply(Ticket& t, const Event& e, const Shipped& s);
Outcome apply(Ticket& t, const Event& e, const ShipFailed& f);

// Human moves (human_events.cpp).
Outcome apply(Ticket& t, const Event& e, const VerdictGiven& v);
Outcome apply(Ticket& t, const Event& e, const Updated& u);
Outcome apply(Ticket& t, const Event& e, const Started& s);
Outcome apply(Ticket& t, const Event& e, const Moved& m);
Outcome apply(Ticket& t, const Event& e, const Cancelled& c);
Outcome apply(Ticket& t, const Event& e, const Reopened& r);

// Questions (questions.cpp).
Outcome apply(Ticket& t, const Event& e, const QuestionAsked& q);
Outcome apply(Ticket& t, const Event& e, const QuestionAnswered& a);
Outcome apply(Ticket& t, const Event& e, const QuestionTimedOut& q);
Outcome apply(Ticket& t, const Event& e, const QuestionCancelled& c);

// Handoff service levels (handoffs.cpp).
Outcome apply(Ticket& t, const Event& e, const HandoffReminded& r);
Outcome apply(Ticket& t, const Event& e, const HandoffEscalated& x);

}  // namespace board::handlers
