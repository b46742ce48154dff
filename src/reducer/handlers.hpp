#pragma once
// One handler per event kind. reduce() has checked the envelope (created first, seq
// contiguous) before any handler runs; each handler checks the rest and either returns the
// next ticket or a Rejection. Leaving out a handler for a new event is a compile error.

#include <board/event.hpp>
#include <board/reduce.hpp>

namespace board::handlers {

// Agent-side facts (agent_events.cpp).
Reduced apply(Ticket t, const Event& e, const Created& c);
Reduced apply(Ticket t, const Event& e, const RunStarted& r);
Reduced apply(Ticket t, const Event& e, const RunFinished& r);
Reduced apply(Ticket t, const Event& e, const RunInterrupted& r);
Reduced apply(Ticket t, const Event& e, const ArtifactRecorded& a);
Reduced apply(Ticket t, const Event& e, const NoteAdded& n);
Reduced apply(Ticket t, const Event& e, const Forked& f);

// Human moves (human_events.cpp).
Reduced apply(Ticket t, const Event& e, const VerdictGiven& v);
Reduced apply(Ticket t, const Event& e, const Updated& u);
Reduced apply(Ticket t, const Event& e, const Started& s);
Reduced apply(Ticket t, const Event& e, const Moved& m);
Reduced apply(Ticket t, const Event& e, const Cancelled& c);
Reduced apply(Ticket t, const Event& e, const Reopened& r);

// Questions (questions.cpp).
Reduced apply(Ticket t, const Event& e, const QuestionAsked& q);
Reduced apply(Ticket t, const Event& e, const QuestionAnswered& a);
Reduced apply(Ticket t, const Event& e, const QuestionTimedOut& q);

}  // namespace board::handlers
