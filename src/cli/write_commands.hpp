#pragma once
// The first commands that write: `board init` and `board create`. Each returns what to print
// and the exit code instead of printing, so tests call them directly.

#include <board/ticket.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace board::cli {

struct CommandOutcome {
    int exit_code = 0;                  ///< 0 done, 1 refused, 2 usage, 3 storage (spec/cli.md)
    std::string output;                 ///< for stdout
    std::string message;                ///< one line for stderr: what and why
    std::vector<std::string> warnings;  ///< for stderr, each `board: warning: ...`
};

/// Why `title` cannot be a ticket's title, or nullopt: a title is one line with something on
/// it (blank, a line break or an escape would break every table and log line showing it).
/// Checked where people and agents type titles (create, update, the HTTP API), not by the
/// reducer, so that no log that replayed yesterday stops replaying today.
std::optional<std::string> title_error(std::string_view title);

/// Nothing but spaces, tabs and line breaks: as bare as no text at all.
bool is_blank(std::string_view text);

/// Creates `dir/board.yaml` (commented defaults) and `dir/tickets/`. Refuses an existing board.
CommandOutcome init_board(const std::filesystem::path& dir, const std::string& prefix);

struct CreateRequest {
    std::string title;
    std::string description;
    std::string type = "task";
    int priority = 2;
    std::vector<std::string> labels;
    std::string parent;
    std::vector<std::string> blocked_by;
    std::string requires_;  ///< wire spelling, empty for none
    std::string awaiting;   ///< wire spelling, empty for none
    bool manual = false;    ///< deprecated: means awaiting work
};

/// Allocates the next id under the board lock and appends its `created` event durably.
/// `parent` and `blocked_by` must name tickets on the board (an epic, for the parent).
CommandOutcome create_ticket(const std::filesystem::path& board,
                             const CreateRequest& request,
                             const Actor& by,
                             bool json);

/// Who a command acts as: `agent:<phase>` inside an agent run (`BOARD_RUN` set, phase from
/// `BOARD_PHASE`), else `human:<--as or $USER>`.
Actor invoking_actor(const std::string& as_name);

}  // namespace board::cli
