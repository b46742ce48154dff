#include "orchestrator/shipping.hpp"

#include "orchestrator/agent_process.hpp"
#include "support/files.hpp"
#include "support/process.hpp"

#include <board/board_dir.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>

namespace board::orchestrator {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

struct ToolResult {
    int exit_code = -1;
    std::string output;  ///< stdout and stderr as the tool printed them (the last 64 KB)
    std::string launch_error;

    bool ok() const { return launch_error.empty() && exit_code == 0; }

    /// Its last non-empty line, for a reason a person reads.
    std::string last_words() const {
        if (!launch_error.empty()) return launch_error;
        std::string text = output;
        while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
        const auto start = text.rfind('\n');
        std::string line = start == std::string::npos ? text : text.substr(start + 1);
        if (line.size() > 300) line = line.substr(0, 300) + "…";
        return line.empty() ? fmt::format("exit {}", exit_code) : line;
    }

    /// Its output's lines, without blanks.
    std::vector<std::string> lines() const {
        std::vector<std::string> out;
        std::istringstream in(output);
        for (std::string line; std::getline(in, line);)
            if (!line.empty()) out.push_back(line);
        return out;
    }
};

/// One line of the daemon's own appended to the shipping log `log`.
void append_log(const fs::path& log, const std::string& line) {
    std::error_code ec;
    fs::create_directories(log.parent_path(), ec);
    std::ofstream{log, std::ios::app} << line << '\n';
}

/// Runs `argv` in `cwd` to its end, its output appended to `log` after a `$ argv` line, and
/// returned.
asio::awaitable<ToolResult> run_tool(asio::any_io_executor executor,
                                     const std::vector<std::string>& argv,
                                     const fs::path& cwd,
                                     const fs::path& log) {
    std::string header = "$";
    for (const auto& a : argv) header += ' ' + a;
    append_log(log, header);
    std::error_code ec;
    const auto before = fs::file_size(log, ec);
    LaunchSpec spec;
    spec.argv = argv;
    spec.cwd = cwd;
    spec.log_file = log;
    spec.timeout = std::chrono::minutes{5};
    spec.grace = std::chrono::seconds{5};
    spec.max_output = 16u << 20;
    const auto process = std::make_shared<AgentProcess>(executor);
    const ProcessOutcome outcome = co_await process->run(std::move(spec));
    ToolResult result;
    result.exit_code = outcome.timed_out ? -1 : outcome.exit_code;
    result.launch_error = outcome.launch_error;
    if (outcome.timed_out) result.launch_error = "did not finish within 5 minutes";
    std::ifstream in(log, std::ios::binary);
    const auto after = fs::file_size(log, ec);
    const std::uintmax_t from =
        std::max<std::uintmax_t>(ec ? 0 : before, after > (64u << 10) ? after - (64u << 10) : 0);
    in.seekg(static_cast<std::streamoff>(from));
    std::ostringstream text;
    text << in.rdbuf();
    result.output = text.str();
    co_return result;
}

fs::path worktree_of(const ShipRequest& r) {
    return worktree_dir(r.board_root, r.id);
}

ShipFailed failed(const ShipRequest& r, std::string reason) {
    return ShipFailed{r.branch, std::move(reason)};
}

}  // namespace

std::vector<std::string> fill_placeholders(
    const std::vector<std::string>& pattern,
    const std::vector<std::pair<std::string, std::string>>& values) {
    std::vector<std::string> out;
    for (const auto& element : pattern) {
        std::string filled;
        for (std::size_t at = 0; at < element.size();) {
            bool replaced = false;
            for (const auto& [name, value] : values) {
                const std::string key = "{" + name + "}";
                if (element.compare(at, key.size(), key) == 0) {
                    filled += value;
                    at += key.size();
                    replaced = true;
                    break;
                }
            }
            if (!replaced) filled += element[at++];
        }
        out.push_back(std::move(filled));
    }
    return out;
}

asio::awaitable<std::variant<Shipped, ShipFailed>> ship_branch(asio::any_io_executor executor,
                                                               ShipRequest r) {
    if (r.config.policy == ShipMethod::none) co_return Shipped{ShipMethod::none, r.branch, {}};
    const fs::path& log = r.log_file;

    const std::vector<std::string> show_toplevel =
        git_argv(r.board_root, {"rev-parse", "--show-toplevel"});
    const auto top = co_await run_tool(executor, show_toplevel, r.board_root, log);
    if (!top.ok() || top.lines().empty())
        co_return failed(r, "the board is not in a git repository: " + top.last_words());
    const fs::path checkout = top.lines().back();
    const std::vector<std::string> current_branch =
        git_argv(checkout, {"symbolic-ref", "--quiet", "--short", "HEAD"});
    const auto head = co_await run_tool(executor, current_branch, checkout, log);
    const std::string current = head.ok() && !head.lines().empty() ? head.lines().back() : "";
    const std::string base = r.config.base.empty() ? current : r.config.base;
    if (base.empty())
        co_return failed(
            r,
            fmt::format(
                "{} is not on a branch (a detached HEAD): check a branch out, or set ship.base",
                checkout.string()));
    const std::vector<std::string> branch_exists =
        git_argv(checkout, {"rev-parse", "--verify", "--quiet", "refs/heads/" + r.branch});
    const auto exists = co_await run_tool(executor, branch_exists, checkout, log);
    if (!exists.ok())
        co_return failed(r, fmt::format("the branch {} is not in {}", r.branch, checkout.string()));

    if (r.config.policy == ShipMethod::merge) {
        if (current != base)
            co_return failed(
                r,
                fmt::format("{} is on {}, not on {} (ship.base): check {} out, then approve again",
                            checkout.string(),
                            current.empty() ? "no branch" : current,
                            base,
                            base));
        // The user's own identity when git has one; the board's otherwise, so the merge commit
        // can be made on a machine where none is set.
        std::vector<std::string> merge_args;
        const std::vector<std::string> user_email = git_argv(checkout, {"config", "user.email"});
        const auto email = co_await run_tool(executor, user_email, checkout, log);
        if (!email.ok())
            merge_args = {
                "-c", "user.name=board-daemon", "-c", "user.email=board-daemon@localhost"};
        for (const char* arg : {"merge", "--no-ff", "--no-edit", "-m"})
            merge_args.emplace_back(arg);
        merge_args.push_back(fmt::format("Merge {}: {}", r.branch, r.title));
        merge_args.push_back(r.branch);
        const std::vector<std::string> merge = git_argv(checkout, merge_args);
        const auto merged = co_await run_tool(executor, merge, checkout, log);
        if (!merged.ok()) {
            const std::vector<std::string> list_unmerged =
                git_argv(checkout, {"diff", "--name-only", "--diff-filter=U"});
            const auto unmerged = co_await run_tool(executor, list_unmerged, checkout, log);
            const auto files = unmerged.lines();
            if (!files.empty()) {
                const std::vector<std::string> abort_merge =
                    git_argv(checkout, {"merge", "--abort"});
                co_await run_tool(executor, abort_merge, checkout, log);
                std::string list;
                for (std::size_t i = 0; i < files.size() && i < 20; ++i)
                    list += (i ? ", " : "") + files[i];
                if (files.size() > 20) list += fmt::format(" and {} more", files.size() - 20);
                co_return failed(r,
                                 fmt::format("merging {} into {} conflicts in {}; the merge was "
                                             "aborted: merge it by hand, then approve",
                                             r.branch,
                                             base,
                                             list));
            }
            co_return failed(
                r,
                fmt::format(
                    "git merge {} into {} failed: {}", r.branch, base, merged.last_words()));
        }
        const std::vector<std::string> head_commit = git_argv(checkout, {"rev-parse", "HEAD"});
        const auto commit = co_await run_tool(executor, head_commit, checkout, log);
        co_return Shipped{ShipMethod::merge,
                          r.branch,
                          commit.lines().empty() ? std::string{} : commit.lines().back()};
    }

    // A pull request opened before the daemon stopped, not recorded yet: that one.
    const fs::path opened = opened_pull_request_file(r.board_root, r.id);
    if (const auto kept = read_whole_file(opened, AT_FDCWD, 64 * 1024)) {
        std::istringstream lines{*kept};
        std::string branch, address;
        if (std::getline(lines, branch) && branch == r.branch && std::getline(lines, address)) {
            append_log(log, "the pull request opened before the daemon stopped: " + address);
            co_return Shipped{ShipMethod::pr, r.branch, address};
        }
    }
    // A pull request: the branch pushed, then offered with the configured command.
    const std::vector<std::string> push = git_argv(checkout, {"push", r.config.remote, r.branch});
    const auto pushed = co_await run_tool(executor, push, checkout, log);
    if (!pushed.ok())
        co_return failed(
            r,
            fmt::format(
                "git push {} {} failed: {}", r.config.remote, r.branch, pushed.last_words()));
    const auto argv = fill_placeholders(
        r.config.pr_command,
        {{"branch", r.branch}, {"base", base}, {"title", r.title}, {"id", r.id}, {"body", r.body}});
    const auto offered = co_await run_tool(executor, argv, checkout, log);
    if (!offered.ok())
        co_return failed(r, fmt::format("{} failed: {}", argv.front(), offered.last_words()));
    std::string address;
    for (const auto& line : offered.lines())
        if (line.find("://") != std::string::npos) address = line;
    std::error_code ec;
    fs::create_directories(opened.parent_path(), ec);
    if (auto failed = write_file_atomically(opened, r.branch + "\n" + address + "\n");
        !failed.empty())
        append_log(log, "not kept until it is recorded (a restart may open it again): " + failed);
    co_return Shipped{ShipMethod::pr, r.branch, address};
}

fs::path opened_pull_request_file(const fs::path& board_root, const std::string& id) {
    return board_root / ".board" / "shipping" / (id + ".pr");
}

asio::awaitable<std::vector<std::string>> clean_up_worktree(asio::any_io_executor executor,
                                                            ShipRequest r,
                                                            bool delete_branch) {
    std::vector<std::string> problems;
    if (!r.config.cleanup) co_return problems;
    const fs::path worktree = worktree_of(r);
    std::error_code ec;
    if (fs::exists(worktree, ec)) {
        const std::vector<std::string> remove_worktree =
            git_argv(r.board_root, {"worktree", "remove", "--force", worktree.string()});
        const auto removed = co_await run_tool(executor, remove_worktree, r.board_root, r.log_file);
        if (!removed.ok())
            problems.push_back(fmt::format(
                "the worktree {} was not removed: {}", worktree.string(), removed.last_words()));
    }
    if (delete_branch) {
        const std::vector<std::string> delete_merged =
            git_argv(r.board_root, {"branch", "-d", r.branch});
        const auto deleted = co_await run_tool(executor, delete_merged, r.board_root, r.log_file);
        if (!deleted.ok())
            problems.push_back(
                fmt::format("the branch {} was not deleted: {}", r.branch, deleted.last_words()));
    }
    co_return problems;
}

}  // namespace board::orchestrator
