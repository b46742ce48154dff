#include "orchestrator/preflight.hpp"

#include "orchestrator/agent_process.hpp"

#include <board/sandbox.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <map>

namespace board::orchestrator {

std::string install_hint(DialectKind kind) {
    switch (kind) {
        case DialectKind::claude:
            return "install Claude Code (npm install -g @anthropic-ai/claude-code) or change "
                   "agents.default.command in board.yaml";
        case DialectKind::codex:
            return "install Codex (npm install -g @openai/codex) or change "
                   "agents.default.command in board.yaml";
        case DialectKind::gemini:
            return "install Gemini CLI (npm install -g @google/gemini-cli) or change "
                   "agents.default.command in board.yaml";
        case DialectKind::generic:
            break;
    }
    return "check the agent's command in board.yaml";
}

std::string probe_sandbox() {
    if (landlock_abi() == 0) return "this kernel offers no Landlock";
    boost::asio::io_context io;
    LaunchSpec spec;
    spec.argv = {"/bin/true"};
    std::string problem;
    spec.reading_rules = std::make_shared<UniqueFd>(prepare_reading({}, problem));
    if (!*spec.reading_rules) return problem;
    spec.writing_rules = std::make_shared<UniqueFd>(prepare_writing(Confinement{}, problem));
    if (!*spec.writing_rules) return problem;
    spec.log_file = "/dev/null";
    spec.timeout = std::chrono::seconds{20};
    auto process = std::make_shared<AgentProcess>(io.get_executor());
    boost::asio::co_spawn(
        io,
        [&problem, process, spec]() -> boost::asio::awaitable<void> {
            const ProcessOutcome out = co_await process->run(spec);
            if (!out.launch_error.empty())
                problem = out.launch_error;
            else if (out.timed_out || out.exit_code != 0)
                problem = out.output.report.error.empty() ? "the confined probe failed"
                                                          : out.output.report.error;
        },
        boost::asio::detached);
    io.run();
    return problem;
}

std::vector<AgentCheck> check_agents(const BoardConfig& config, std::chrono::milliseconds timeout) {
    // One check per program, naming every phase that runs it.
    std::vector<AgentCheck> checks;
    std::map<std::string, std::size_t> index;
    std::vector<std::vector<std::string>> commands;
    for (const Status phase : all_statuses) {
        const AgentConfig* agent = config.agent(phase);
        if (!agent || (phase == Status::review && !agent->enabled)) continue;
        const std::string& program = agent->command.front();
        auto [it, added] = index.emplace(program, checks.size());
        if (added) {
            checks.push_back(AgentCheck{program, {}, agent->dialect, false, {}, {}});
            commands.push_back(agent->command);
        }
        auto& phases = checks[it->second].phases;
        phases += (phases.empty() ? "" : ", ") + std::string{to_string(phase)};
    }

    boost::asio::io_context io;
    for (std::size_t i = 0; i < checks.size(); ++i) {
        auto& check = checks[i];
        LaunchSpec spec;
        spec.argv = version_command(check.dialect, commands[i]);
        const bool ask_version = !spec.argv.empty();
        if (!ask_version) spec.argv = {check.program};
        spec.log_file = "/dev/null";
        spec.timeout = timeout;
        spec.grace = std::chrono::seconds{1};
        if (!ask_version) {
            // A program of the text protocol need not know --version: only find it.
            std::string error;
            if (!find_program(spec, error)) {
                check.problem = error + ": " + install_hint(check.dialect);
            } else {
                check.ok = true;
            }
            continue;
        }
        auto process = std::make_shared<AgentProcess>(io.get_executor());
        boost::asio::co_spawn(
            io,
            [&check, process, spec]() -> boost::asio::awaitable<void> {
                const ProcessOutcome out = co_await process->run(spec);
                const std::string said = out.output.report.error.empty() ? process->last_line()
                                                                         : out.output.report.error;
                if (!out.launch_error.empty()) {
                    check.problem = out.launch_error + ": " + install_hint(check.dialect);
                } else if (out.timed_out) {
                    check.problem = "`" + spec.argv.front() + " --version` did not answer within " +
                                    std::to_string(spec.timeout.count() / 1000) + " s";
                } else if (out.exit_code != 0) {
                    check.problem = "`" + spec.argv.front() + " --version` exited with status " +
                                    std::to_string(out.exit_code) +
                                    (said.empty() ? "" : ": " + said);
                } else {
                    check.ok = true;
                    check.version = said;
                }
            },
            boost::asio::detached);
    }
    io.run();
    return checks;
}

}  // namespace board::orchestrator
