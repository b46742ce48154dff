// board-example-agent: the model-free agent of the demo board. It reads its prompt on stdin,
// writes a readable artifact for its phase from the ticket's own text, and prints a short
// narration and its signal, so a newcomer sees tickets live through every column, handoffs
// included, without a model installed.
//
// The ticket's description may script a demo with directive lines (full grammar and examples
// in README.md beside this file):
//
//   example-agent: <phase> <SIGNAL>[: context]   hand over, e.g. research INPUT_NEEDED: Which DB?
//   example-agent: <phase> question {json}       ask a <question> (spec/state-machine.md §6)
//   example-agent: <phase> fail                  exit 1, no artifact (a failed attempt)
//
// <phase> is research, planning, implementing or review. A directive applies only while the
// prompt's `## Human feedback` section is `(none)` and the phase's artifact does not record it
// as done; after that the agent completes the phase (COMPLETE), so a demo hands over, a human
// answers, and the ticket moves on.
//
// Environment (spec/storage.md): BOARD_PHASE and BOARD_ARTIFACT are required; BOARD_TICKET and
// BOARD_RUN are used in the text. Exit 0 on success, 1 for a scripted failure or an artifact
// that cannot be written, 2 when run without the daemon's environment.

#include "example_agent.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <system_error>

namespace {

namespace agent = board::example_agent;
namespace fs = std::filesystem;

constexpr std::string_view usage =
    "usage: board-example-agent < prompt.md\n"
    "  The model-free demo agent that board-daemon runs. It needs BOARD_PHASE\n"
    "  (research|planning|implementing|review) and BOARD_ARTIFACT (where to write) in its\n"
    "  environment, reads the rendered prompt on stdin, writes the artifact and prints its\n"
    "  signal. Scenario directives: see examples/example_agent/README.md.\n";

std::string env_or(const char* name, std::string fallback) {
    const char* value = std::getenv(name);
    return value == nullptr ? fallback : std::string{value};
}

void say(std::string_view line) {
    std::cout << "[example agent] " << line << '\n';
}

void warn(std::string_view line) {
    std::cerr << "board-example-agent: " << line << '\n';
}

/// The file's text, or empty when it does not exist (the phase's first run).
std::string read_if_present(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return {};
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

/// Temp file beside the target, then rename: the daemon never reads half an artifact.
/// Returns an error message naming the file, or empty on success.
std::string write_atomically(const fs::path& file, const std::string& content) {
    fs::path temp = file;
    temp += ".example-agent.tmp";
    {
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        if (!out) return temp.string() + ": cannot create (" + std::strerror(errno) + ")";
        out.write(content.data(), static_cast<std::streamsize>(content.size()));
        out.flush();
        if (!out) return temp.string() + ": cannot write (" + std::strerror(errno) + ")";
    }
    std::error_code ec;
    fs::rename(temp, file, ec);
    if (ec) {
        fs::remove(temp, ec);
        return file.string() + ": cannot replace it with " + temp.string() + " (" + ec.message() +
               ")";
    }
    return {};
}

int run() {
    const std::string phase_text = env_or("BOARD_PHASE", "");
    const auto phase = agent::phase_from_name(phase_text);
    if (!phase) {
        warn("BOARD_PHASE is \"" + agent::inert(phase_text) +
             "\", not one of research, planning, implementing, review (the daemon sets it)");
        std::cerr << usage;
        return 2;
    }
    const std::string artifact_path = env_or("BOARD_ARTIFACT", "");
    if (artifact_path.empty()) {
        warn("BOARD_ARTIFACT is not set: it names the file this phase must write");
        std::cerr << usage;
        return 2;
    }
    const std::string ticket_id = env_or("BOARD_TICKET", "");
    const std::string run_id = env_or("BOARD_RUN", "");

    const std::string prompt{std::istreambuf_iterator<char>{std::cin},
                             std::istreambuf_iterator<char>{}};
    const auto scan = agent::find_directives(prompt);
    for (const auto& warning : scan.warnings) warn("warning: " + warning);
    const auto feedback = agent::read_feedback(prompt);
    if (!feedback.section_found) {
        warn("warning: the prompt has no \"## Human feedback\" section; reading it as (none)");
    }

    agent::ArtifactInput input;
    input.phase = *phase;
    input.ticket_id = ticket_id;
    input.run = run_id;
    input.ticket = agent::read_ticket(prompt, ticket_id);
    input.feedback = feedback;
    input.decision = agent::decide_run(*phase,
                                       scan.directives,
                                       feedback,
                                       agent::scenario_steps_done(read_if_present(artifact_path)));
    const auto& decision = input.decision;

    say(agent::inert(ticket_id) + " " + phase_text + (run_id.empty() ? "" : ", run " + run_id) +
        ": \"" + agent::inert(input.ticket.title) + "\"");
    say("human feedback: " + (feedback.given() ? std::to_string(feedback.notes.size()) + " note(s)"
                                               : std::string{"none"}));
    say(decision.why);
    std::cout.flush();

    if (decision.fail) {
        warn("failing on purpose, as the ticket's scenario asks (\"example-agent: " +
             agent::inert(decision.carried_out.back().text) + "\")");
        return 1;
    }

    if (const auto error = write_atomically(artifact_path, agent::render_artifact(input));
        !error.empty()) {
        warn("cannot write the artifact: " + error);
        return 1;
    }
    say("wrote " + agent::inert(artifact_path) + " (status: " +
        (decision.status == agent::ArtifactStatus::complete ? "complete" : "in-progress") + ")");

    for (const auto& directive : decision.carried_out) {
        if (directive.kind == agent::Directive::Kind::question) {
            std::cout << "<question>" << directive.question_json << "</question>\n";
        } else if (directive.kind == agent::Directive::Kind::signal) {
            std::cout << agent::promise_tag(directive.signal, directive.context) << '\n';
        }
    }
    if (decision.print_complete) {
        std::cout << agent::promise_tag("COMPLETE",
                                        fs::path{artifact_path}.filename().string() + " written")
                  << '\n';
    }
    std::cout.flush();
    if (!std::cout) {
        warn("cannot write to standard output");
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1) {
        const std::string_view arg{argv[1]};
        if (arg == "--help" || arg == "-h") {
            std::cout << usage;
            return 0;
        }
        std::cerr << "board-example-agent: unexpected argument \"" << arg << "\"\n" << usage;
        return 2;
    }
    try {
        return run();
    } catch (const std::exception& e) {
        std::cerr << "board-example-agent: " << e.what() << '\n';
        return 1;
    }
}
