#pragma once
// tk's tick files (research/peers-ticks.md §1.2 and §1.3): one JSON object per tick in
// `.tick/issues/<id>.json`, read into the fields `board import-ticks` maps
// (app::Board::import_ticks in include/board/app.hpp says what the import guarantees).

#include <board/app.hpp>
#include <board/ticket.hpp>

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace board::app {

/// tk's fields every tick has that the board does not keep: reported once, not per tick.
inline constexpr std::array<std::string_view, 3> tick_fields_not_kept{
    "owner", "created_by", "updated_at"};

/// One note line of a tick's `notes` string (`YYYY-MM-DD HH:MM - [human] text`).
struct TickNote {
    bool human = false;  ///< the `[human] ` prefix: written with `--from human` or by a verdict
    std::string text;    ///< without the stamp and the prefix; continuation lines kept
    /// The stamp as written (local wall-clock time, no zone), counted as if it were UTC;
    /// nullopt for text before the first stamped line.
    std::optional<UnixMillis> wall;
    friend bool operator==(const TickNote&, const TickNote&) = default;
};

/// The fields of a tick the import reads. Strings are empty and optionals absent when the
/// file leaves them out (or writes null).
struct Tick {
    std::string id;
    std::string title;
    std::string description;
    std::string acceptance_criteria;
    std::string status;  ///< open, in_progress or closed
    int priority = 2;
    TicketType type = TicketType::task;
    std::vector<std::string> labels;
    std::string parent;
    std::vector<std::string> blocked_by;
    bool manual = false;
    std::optional<Awaiting> requires_;
    std::optional<Awaiting> awaiting;
    std::string verdict;  ///< approved, rejected or empty
    std::vector<TickNote> notes;
    UnixMillis created_at = 0;
    std::optional<UnixMillis> started_at;
    std::optional<UnixMillis> closed_at;
    std::string closed_reason;
    /// Fields present with a value the board does not keep (`after`, `external_ref`, unknown
    /// keys...), in file order.
    std::vector<UnmappedField> unmapped;
};

/// Parses a tick file's text. `file` names the file in errors. Errors (one line each, the
/// file first, then the line for JSON syntax or the field for a bad value): not JSON, not an
/// object, a required field missing (id, title, status, priority, type, created_at), a value
/// of the wrong type or outside tk's enums.
std::variant<Tick, std::string> parse_tick(std::string_view json, std::string_view file);

/// Splits tk's `notes` string into notes: a line starting `YYYY-MM-DD HH:MM - ` starts a note,
/// any other line continues the one before (multi-line feedback, `--edit`).
std::vector<TickNote> parse_tick_notes(std::string_view notes);

/// RFC 3339 as Go writes time.Time (`2026-01-15T10:30:00.123456789Z`, or `...+02:00`), to
/// UTC milliseconds. nullopt if malformed.
std::optional<UnixMillis> parse_rfc3339(std::string_view text);

}  // namespace board::app
