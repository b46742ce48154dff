#pragma once
// A ticket's history for people: each event as one line, the state in one line, and what an
// event changed (`board log`, `board replay`, `board show`).

#include <board/event.hpp>
#include <board/ticket.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace board::cli {

/// One line: seq, time, author, type and the event's essentials.
std::string describe(const Event& event);

/// One line: the column and whose turn it is, with the counters that matter.
std::string describe_state(const Ticket& ticket);

/// Lines `field: before → after` for every snapshot field the event changed, looking inside
/// lists and objects: `notes: + {from: "human", ...}`, `questions[q1].status: "pending" →
/// "answered"`, `artifacts.plan.status: ...`. Numbers as written (`cost_usd: 0 → 0.21`).
std::vector<std::string> describe_changes(const Ticket& before, const Ticket& after);

}  // namespace board::cli
