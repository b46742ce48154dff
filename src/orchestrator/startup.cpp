#include "orchestrator/startup.hpp"

#include "orchestrator/run_folder.hpp"

#include <board/sandbox.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace board::orchestrator {

namespace fs = std::filesystem;

Expected<ReadyToStart, StartRefused> check_before_start(const fs::path& board_root,
                                                        const BoardConfig& config) {
    auto templates = load_prompt_templates(board_root);
    if (auto* error = std::get_if<std::string>(&templates))
        return StartRefused{"board-daemon: " + *error, 3};
    for (const Status phase : all_statuses) {
        if (const auto* agent = config.agent(phase); agent && agent->command.empty())
            return StartRefused{
                fmt::format("board-daemon: agents.{}.command is empty", to_string(phase)), 3};
    }
    // Fail fast: an agent that is not installed would fail every ticket, one by one.
    ReadyToStart ready{std::move(std::get<PromptTemplates>(templates)), check_agents(config), {}};
    std::string missing;
    for (const auto& agent : ready.agents) {
        if (agent.ok) continue;
        if (!missing.empty()) missing += '\n';
        missing += fmt::format(
            "board-daemon: the agent for {} cannot run: {}", agent.phases, agent.problem);
    }
    if (!missing.empty()) return StartRefused{missing, 2};
    bool wanted = false;
    ready.sandbox_problem = "every phase has sandbox: none";
    for (const Status phase : all_statuses) {
        const auto* agent = config.agent(phase);
        if (!agent || agent->sandbox == SandboxMode::none) continue;
        if (!wanted) ready.sandbox_problem = probe_sandbox();
        wanted = true;
        if (agent->sandbox == SandboxMode::landlock && !ready.sandbox_problem.empty())
            return StartRefused{fmt::format("board-daemon: agents.{}.sandbox is landlock, but "
                                            "agents cannot be confined here: {}",
                                            to_string(phase),
                                            ready.sandbox_problem),
                                2};
    }
    return ready;
}

Expected<UniqueFd, StartRefused> lock_daemon(const fs::path& board_root) {
    const fs::path tickets = board_root / "tickets";
    std::error_code ec;
    fs::create_directories(tickets, ec);
    const auto file = tickets / ".daemon.lock";
    UniqueFd fd{::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)};
    if (!fd)
        return StartRefused{
            fmt::format("board-daemon: {}: {}", file.string(), std::strerror(errno)), 3};
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
        const std::string holder = read_small_file(file, 64);
        return StartRefused{
            fmt::format("board-daemon: another board-daemon (pid {}) is already running on {}; "
                        "stop it first",
                        holder.empty() ? "unknown" : holder.substr(0, holder.find('\n')),
                        board_root.string()),
            1};
    }
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd.get(), 0) == 0) {
        [[maybe_unused]] auto n = ::pwrite(fd.get(), pid.data(), pid.size(), 0);
    }
    return fd;
}

void announce_page(const http::HttpServer& server, const std::string& host, Reporter& reporter) {
    // The link with the token goes to a person's terminal only, never into a log file or
    // a journal an agent might read: on loopback at every start (the page needs it to
    // write, and the file it comes from is closed to agents), elsewhere when it is new.
    const bool terminal = ::isatty(STDOUT_FILENO) == 1;
    const bool loopback = http::is_loopback_host(host);
    if (server.token().empty() || (terminal && (loopback || server.token_generated()))) {
        reporter.message("the board's page: " + server.page_url());
        if (server.token_generated() && !loopback)
            reporter.message(
                "that address holds the new token of .board/http-token: it "
                "is shown only this once");
    } else {
        const auto at = server.local_endpoint();
        const std::string shown = http::page_host(at.address());
        reporter.message(
            fmt::format("the board's page: http://{}:{}/ (the token is in .board/http-token: "
                        "open http://{}:{}/?token=<it> once)",
                        shown,
                        at.port(),
                        shown,
                        at.port()));
    }
}

void announce_agents(const std::vector<AgentCheck>& agents,
                     const std::string& sandbox_problem,
                     const BoardConfig& config,
                     Reporter& reporter) {
    if (sandbox_problem.empty()) {
        const int abi = landlock_abi();
        reporter.message(fmt::format(
            "agents are confined with Landlock (ABI {}): they write only their run folder, "
            "worktree, tool state and temp{}",
            abi,
            abi < 3 ? "; below ABI 3 an agent can still truncate a file it cannot write, a "
                      "log among them (a kernel of 6.2 or later closes that)"
                    : ""));
    } else if (std::any_of(all_statuses.begin(), all_statuses.end(), [&](Status p) {
                   const auto* a = config.agent(p);
                   return a && a->sandbox == SandboxMode::automatic;
               })) {
        reporter.message("agents run unconfined: " + sandbox_problem +
                         " (agents.default.sandbox: none says you meant it)");
    }
    for (const auto& agent : agents) {
        reporter.message(fmt::format("agent for {}: {} ({} dialect{}{})",
                                     agent.phases,
                                     agent.program,
                                     to_string(agent.dialect),
                                     agent.version.empty() ? "" : ", ",
                                     agent.version));
    }
}

void announce_start(const DaemonOptions& options,
                    std::size_t tickets,
                    const std::vector<AgentCheck>& agents,
                    const std::string& sandbox_problem,
                    const BoardConfig& config,
                    Reporter& reporter) {
    reporter.message(fmt::format(
        "board-daemon on {}: {} ticket(s){}{}",
        options.board_root.string(),
        tickets,
        options.run_agents ? fmt::format(", max {} agent(s) at once", config.daemon.max_parallel)
                           : std::string{},
        options.mode == DaemonOptions::Mode::watch ? ", watching for changes" : ""));
    if (options.run_agents)
        announce_agents(agents, sandbox_problem, config, reporter);
    else
        reporter.message(
            "agents are not run (--no-agents): the page and the API only; nothing is started, "
            "shipped or timed out");
    if (!config.notify.command.empty()) {
        // A notify command that is not there would fail on the first news: say so now.
        LaunchSpec notify;
        notify.argv = config.notify.command;
        notify.cwd = options.board_root;
        std::string problem;
        if (!find_program(notify, problem))
            reporter.problem("board-daemon: notify: " + problem +
                             ": no one will be notified (notify.command in board.yaml)");
    }
}

std::unique_ptr<http::HttpServer> start_page(boost::asio::io_context& io,
                                             const std::filesystem::path& board_root,
                                             const http::HttpAddress& address,
                                             std::shared_ptr<app::LiveBoard> live,
                                             Reporter& reporter,
                                             Notifier& notifier) {
    http::HttpOptions options;
    options.board = board_root;
    options.live_board = live;
    options.address = address;
    auto server = std::make_unique<http::HttpServer>(io, options);
    if (const std::string error = server->start(); !error.empty()) {
        reporter.problem("board-daemon: --http: " + error);
        return nullptr;
    }
    announce_page(*server, address.host, reporter);
    // Notifications link their ticket on the page (never with the token in it), at the host
    // the printed link names.
    const auto at = server->local_endpoint();
    notifier.set_page(fmt::format("http://{}:{}/", http::page_host(at.address()), at.port()));
    return server;
}

}  // namespace board::orchestrator
