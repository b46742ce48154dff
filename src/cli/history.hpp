#pragma once
// Reading a ticket's history for `board log` and `board replay`: every line of
// `tickets/<ID>/events.jsonl` decoded, each failure named by file and line, and each event
// rendered as one line a person can read.
//
// Reading goes through the event log (seq checks, torn-tail recovery); this adds the
// rendering.

#include <board/event.hpp>
#include <board/ticket.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace board::cli {

/// A history that could not be read: what and where (`tickets/PROJ-1/events.jsonl:7: ...`).
struct HistoryError {
    enum class Kind { unknown_ticket, corrupt } kind = Kind::corrupt;
    std::string message;
};

struct History {
    std::vector<Event> events;
    std::optional<HistoryError> error;  ///< set: `events` holds the lines before the fault
    std::vector<std::string> warnings;  ///< e.g. a torn tail recovered into events.jsonl.torn
};

/// Reads `<board>/tickets/<id>/events.jsonl` through board::read_log. The id is validated
/// before it touches the disk.
History read_history(const std::filesystem::path& board, const std::string& id);

/// One line: seq, time, author, type and the event's essentials.
std::string describe(const Event& event);

/// One line: the column and whose turn it is, with the counters that matter.
std::string describe_state(const Ticket& ticket);

/// Lines `field: before → after` for every top-level snapshot field the event changed.
std::vector<std::string> describe_changes(const Ticket& before, const Ticket& after);

}  // namespace board::cli
