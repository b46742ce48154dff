#pragma once
// Shipping a done ticket's branch (board.yaml `ship:`): merged into the base branch in the
// board's checkout, pushed and offered as a pull request, or left as it is. git and the
// pull-request command run as the daemon's other helpers do (AgentProcess: an argv list, its
// own process group, no inherited descriptors, a timeout), with repository hooks off; their
// output goes to `tickets/<ID>/runs/ship.log`. Nothing here writes the ticket's log: the
// caller records what came of it.

#include <board/board_config.hpp>
#include <board/event.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <filesystem>
#include <string>
#include <variant>
#include <vector>

namespace board::orchestrator {

struct ShipRequest {
    std::string id;
    std::string title;
    std::string body;    ///< for a pull request: what the review said, or the ticket's text
    std::string branch;  ///< `board/<ID>`
    std::filesystem::path board_root;
    std::filesystem::path log_file;  ///< git's and the command's output, appended
    ShipConfig config;
};

/// Ships `request.branch` as `request.config.policy` says: `Shipped` (the merge commit, the
/// pull request's address) or `ShipFailed` with the reason in a person's words (the files in
/// conflict, a checkout on another branch, the command's last words). A conflicted merge is
/// aborted: the checkout is left as it was.
boost::asio::awaitable<std::variant<Shipped, ShipFailed>> ship_branch(
    boost::asio::any_io_executor executor, ShipRequest request);

/// `.board/shipping/<ID>.pr`: a pull request opened and not yet recorded (its branch, then its
/// address), written durably once the command succeeds and removed once `shipped` is on the
/// log. A daemon stopped in between offers that one again instead of opening a second (or
/// failing on "a pull request already exists").
std::filesystem::path opened_pull_request_file(const std::filesystem::path& board_root,
                                               const std::string& id);

/// With `cleanup` on: removes the ticket's worktree, and its branch when `delete_branch` (a
/// merged one; a branch offered as a pull request, left by `none` or of a cancelled ticket is
/// the work, and stays). Returns what could not be removed, in a person's words (empty: all).
boost::asio::awaitable<std::vector<std::string>> clean_up_worktree(
    boost::asio::any_io_executor executor, ShipRequest request, bool delete_branch);

/// `{branch}`, `{base}`, `{title}`, `{id}` and `{body}` of `pattern` replaced (each element
/// of an argv list stays one argument, whatever the values hold).
std::vector<std::string> fill_placeholders(
    const std::vector<std::string>& pattern,
    const std::vector<std::pair<std::string, std::string>>& values);

}  // namespace board::orchestrator
