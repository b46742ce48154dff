// `board`: the command line over the application layer. The commands are the rows of
// command.hpp's table; this file builds the ones the command line needs, parses, and runs.

#include "cli/command.hpp"
#include "cli/completion.hpp"

#include <board/version.hpp>

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <vector>

namespace {

using namespace board::cli;

std::vector<Command> every_command() {
    std::vector<Command> all;
    for (const auto& c : reading_commands()) all.push_back(c);
    for (const auto& c : history_commands()) all.push_back(c);
    for (const auto& c : writing_commands()) all.push_back(c);
    return all;
}

/// The command `argv` invokes, if nothing before it asks for the whole table; else empty:
/// build every command. Before the command only the global options may come (`--board DIR`,
/// `--as NAME`, `--json`); anything else there (`--help`, `--version`, an unknown flag, `--`)
/// or no command at all needs every command (the help lists them, and an error must read the
/// same whichever way it was reached).
std::string_view invoked_command(int argc, char** argv, const std::vector<Command>& commands) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg{argv[i]};
        if (arg == "--board" || arg == "--as") {
            ++i;  // its value, whatever it looks like
            continue;
        }
        if (arg == "--json" || arg.starts_with("--board=") || arg.starts_with("--as=")) continue;
        for (const auto& c : commands)
            if (c.name == arg) return c.name;
        return {};
    }
    return {};
}

/// A command line CLI11 could not parse, as one line like every other refusal:
/// `board: reject: FEEDBACK is required (board reject --help)`.
int usage_error(
    const CLI::App& app, int argc, char** argv, std::string_view only, std::string_view what) {
    std::string command{only};
    if (command.empty()) {
        const auto chosen = app.get_subcommands();  // those it got to before the error
        if (!chosen.empty()) command = chosen.front()->get_name();
    }
    const std::string help = command.empty() ? "board --help" : "board " + command + " --help";
    const std::string where = command.empty() ? std::string{} : command + ": ";
    std::string message{what};
    if (message == "A subcommand is required") {
        message = "a command is required";
        for (int i = 1; i < argc; ++i) {  // the word meant as one, if there is one
            const std::string_view arg{argv[i]};
            if (arg == "--board" || arg == "--as") {
                ++i;  // its value
                continue;
            }
            if (arg.empty() || arg.front() != '-') {
                message = fmt::format("\"{}\" is not a command", argv[i]);
                break;
            }
        }
    }
    for (const auto& [lead, plain] :
         {std::pair{"The following argument was not expected: ", "unexpected argument "},
          std::pair{"The following arguments were not expected: ", "unexpected arguments "}}) {
        const std::string_view prefix{lead};
        if (message.starts_with(prefix)) message = plain + message.substr(prefix.size());
    }
    say(fmt::format("{}{} ({})", where, message, help));
    return static_cast<int>(Exit::usage);
}

/// `--board`, `--as`, `--json` on `app` itself or on a command, so they may come either side.
void add_global_options(CLI::App& app, GlobalOptions& options) {
    app.add_option("--board",
                   options.board_dir,
                   "the board folder (default: $BOARD_DIR, else the nearest board.yaml)");
    app.add_option("--as", options.as, "who a human event is by (default: $USER)");
    app.add_flag("--json", options.json, "machine output on stdout; messages stay on stderr");
}

int run(int argc, char** argv) {
    const auto commands = every_command();
    const std::string_view only = invoked_command(argc, argv, commands);
    // Named, so that usage lines say `board`, not the path it was started by.
    CLI::App app{"board: a kanban board that AI agents and humans share", "board"};
    app.require_subcommand(1);
    GlobalOptions options;
    add_global_options(app, options);
    app.set_version_flag("--version", "board " + std::string{board::version_string});
    app.footer(join_lines(
        {"",
         "Exit codes: 0 done, 1 refused (or unknown id, or nothing next), 2 usage, 3 storage.",
         "Run `board COMMAND --help` for a command's flags and examples."}));

    // Only the invoked command is built (CLI11 builds every option of every subcommand up
    // front); parsing, errors and `COMMAND --help` read the same either way.
    std::vector<std::pair<CLI::App*, Run>> built;
    for (const auto& command : commands) {
        if (!only.empty() && only != command.name) continue;
        CLI::App* sub = app.add_subcommand(std::string{command.name}, std::string{command.summary});
        Run run = command.declare(*sub);
        add_global_options(*sub, options);
        built.emplace_back(sub, std::move(run));
    }
    std::string shell;
    CLI::App* completion = nullptr;
    if (only.empty()) {  // its script is made from the whole table
        completion = app.add_subcommand("completion", "print a shell completion script");
        completion->add_option("SHELL", shell, "bash, zsh or fish")
            ->required()
            ->check(CLI::IsMember(std::vector<std::string>(std::begin(completion_shells),
                                                           std::end(completion_shells))));
        completion->footer(
            "Examples:\n  board completion bash > "
            "~/.local/share/bash-completion/completions/board\n"
            "  source <(board completion bash)\n"
            "  board completion zsh > ~/.zfunc/_board\n"
            "  board completion fish > ~/.config/fish/completions/board.fish");
    }

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // --help and --version are "errors" that succeed: CLI11 prints them.
        if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
        return usage_error(app, argc, argv, only, e.what());
    }
    if (completion && completion->parsed()) {
        std::cout << completion_script(app, shell);
        return 0;
    }
    for (auto& [sub, command] : built)
        if (sub->parsed()) return command(options);
    return usage_error(app, argc, argv, only, "A subcommand is required");
}

}  // namespace

int main(int argc, char** argv) {
    // Anything unexpected (disk, memory) ends in one line and the storage exit code, never a
    // crash report.
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        say(e.what());
        return static_cast<int>(Exit::storage);
    }
}
