#pragma once
// What board-daemon does once, before its loop: the checks that make it refuse to start (a
// broken prompt, an agent that cannot run, a sandbox that was required and is not there),
// the board's lock, and what it tells a person about itself.

#include "orchestrator/notifier.hpp"
#include "orchestrator/preflight.hpp"
#include "orchestrator/prompt.hpp"
#include "orchestrator/reporter.hpp"
#include "support/unique_fd.hpp"

#include <board/board_config.hpp>
#include <board/expected.hpp>
#include <board/http.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace board::orchestrator {

/// Why the daemon does not start, and its exit code (daemon.hpp: 1 another daemon, 2 an agent
/// cannot run, 3 storage or configuration).
struct StartRefused {
    std::string message;  ///< one line, `board-daemon: ...`
    int exit_code = 3;
};

struct ReadyToStart {
    PromptTemplates templates;
    std::vector<AgentCheck> agents;  ///< what the pre-flight found
    std::string sandbox_problem;     ///< why agents cannot be confined; empty: they are
};

/// Loads the prompts, checks every agent program (preflight.hpp) and probes the sandbox once
/// (`landlock` insists on it, `auto` uses it where it works).
Expected<ReadyToStart, StartRefused> check_before_start(const std::filesystem::path& board_root,
                                                        const BoardConfig& config);

/// Takes `tickets/.daemon.lock` (and writes this pid into it): one daemon per board.
Expected<UniqueFd, StartRefused> lock_daemon(const std::filesystem::path& board_root);

/// Says where the page is. The link with the token goes to a person's terminal only, never
/// into a log file or a journal an agent might read.
void announce_page(const http::HttpServer& server, const std::string& host, Reporter& reporter);

/// Says how agents run: confined or not (and why not), and which program with which dialect
/// for which phases.
void announce_agents(const std::vector<AgentCheck>& agents,
                     const std::string& sandbox_problem,
                     const BoardConfig& config,
                     Reporter& reporter);

/// Serves the page and the API at `address` from `live`, says where, and tells `notifier`
/// the page's address; null when it cannot listen (reported).
std::unique_ptr<http::HttpServer> start_page(boost::asio::io_context& io,
                                             const std::filesystem::path& board_root,
                                             const http::HttpAddress& address,
                                             std::shared_ptr<app::LiveBoard> live,
                                             Reporter& reporter,
                                             Notifier& notifier);

/// The daemon's first words: the board and its size, how agents run (or that none do), and a
/// notify command that cannot be found.
void announce_start(const DaemonOptions& options,
                    std::size_t tickets,
                    const std::vector<AgentCheck>& agents,
                    const std::string& sandbox_problem,
                    const BoardConfig& config,
                    Reporter& reporter);

}  // namespace board::orchestrator
