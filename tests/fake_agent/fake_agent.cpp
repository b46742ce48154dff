// board_fake_agent: the agent the daemon's integration tests launch. It does, per run, what a
// behaviour script says, misbehaving on request, and records what it was given.
//
// SCRIPT: `$BOARD_TICKET_DIR/fake-agent/<phase>` (phase from $BOARD_PHASE). Line n (1-based)
// drives the n-th run of that phase on that ticket; once the lines run out the last one
// repeats. Runs are counted in `fake-agent/<phase>.count` (under a lock, replaced by rename).
// No script file: write a complete artifact and print `<promise>COMPLETE</promise>`.
// An empty script line does the default only (a complete artifact, no signal, exit 0).
//
// A line is blank-separated actions, carried out in order:
//   artifact=complete|in-progress|none  write $BOARD_ARTIFACT with that front matter status
//                          (none: leave it as it is). A line without artifact= writes a
//                          complete one before its first action.
//   signal=NAME            print <promise>NAME</promise>
//   signal="NAME: text"    print <promise>NAME: text</promise> (the name is not checked, so
//                          unknown names can be tested)
//   question=JSON          print <question>JSON</question> (JSON as given, even malformed)
//   exit=N                 exit with N now (0-255); must be the last action
//   sleep=MS               sleep that many milliseconds
//   hang, hang=ignore-term sleep forever (ignoring SIGTERM with ignore-term); must be last
//   grandchild             fork a child that sleeps forever, keeping this run's stdout and
//                          stderr open (like `cmd &` in a shell); its pid goes to
//                          fake-agent/grandchild.pid
//   grandchild=closed      the same with the child's stdio on /dev/null
//   grandchild=setsid      the same, and the child leaves the agent's session and process
//                          group (setsid): a group kill misses it
//   flood=MB               print MB MiB of 64-byte junk lines to stdout, then go on
//   no-stdin               never read stdin (wherever it is on the line); the other actions
//                          still run, so `no-stdin signal=COMPLETE` exits at once
//   cost=0.25              print a stream-json result line: total_cost_usd and session_id
//                          (the line's session= id, else fake-<ticket>-<phase>-<n>)
//   session=ID             print a stream-json system/init line with that session_id
//   garbage                print a line of invalid UTF-8, NUL and control bytes
//   stderr=TEXT            print TEXT on stderr
//   stdout=TEXT            print TEXT on stdout (e.g. a fenced or malformed tag)
//   wait=NAME              wait until the file fake-agent/NAME exists (a test releases the
//                          run when it has seen what it printed so far), at most an hour
//   commit=FILE            append a line naming the run to FILE (in the working directory),
//                          then `git add` and `git commit` it there, as an implementing agent
//                          does in its worktree
// Values with blanks are quoted: "..." takes \" \\ \n \t escapes, '...' is literal
// (handy for JSON: question='{"question":"Which DB?","type":"blocking"}').
//
// RECORD: every run appends one line to `fake-agent/log`:
//   ticket=PROJ-3 phase=research board_run=0003 n=1 pid=4242 pgid=4242 fds=0,1,2
//   prompt_bytes=1234 cwd=/x
// (fds: the descriptors it was started with; prompt_bytes=-1 with no-stdin; cwd last since it
// may hold blanks) and copies the prompt to
// `fake-agent/prompt-<phase>-<n>.md`.
//
// Exit status: as scripted (0 by default); 70 with a message on stderr when the script is
// malformed or the fake agent cannot do what it was asked (missing environment, I/O error).

#include "script.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <sys/file.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

/// The descriptors open in this process, ascending and comma-separated, minus the one used to
/// list them.
std::string open_descriptors() {
    DIR* dir = ::opendir("/proc/self/fd");
    if (!dir) return "unknown";
    std::vector<int> fds;
    while (const dirent* entry = ::readdir(dir)) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
        const int fd = std::atoi(entry->d_name);
        if (fd != ::dirfd(dir)) fds.push_back(fd);
    }
    ::closedir(dir);
    std::sort(fds.begin(), fds.end());
    std::string out;
    for (const int fd : fds) out += (out.empty() ? "" : ",") + std::to_string(fd);
    return out;
}

std::string started_with;  ///< open_descriptors() at the start of main

namespace fs = std::filesystem;
using board::fake_agent::Action;

constexpr int misuse_exit = 70;

/// Everything that stops the fake agent before or while it carries out its script.
struct Failure {
    std::string message;
};

std::string errno_text() {
    return std::strerror(errno);
}

/// Writes all of `data` to `fd` (raw writes: no stdio buffer to duplicate across fork()).
bool write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const auto written = ::write(fd, data.data(), data.size());
        if (written < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        data.remove_prefix(static_cast<std::size_t>(written));
    }
    return true;
}

void print(std::string_view text) {
    if (!write_all(STDOUT_FILENO, text)) throw Failure{"writing stdout: " + errno_text()};
}

std::string require_env(const char* name) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') {
        throw Failure{std::string{name} + " is not set (the daemon sets it for every run)"};
    }
    return value;
}

std::string env_or_empty(const char* name) {
    const char* value = std::getenv(name);
    return value == nullptr ? std::string{} : std::string{value};
}

std::string read_file(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw Failure{file.string() + ": cannot read (" + errno_text() + ")"};
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

/// Temp file in the same folder, then rename: a reader sees the old or the new content.
void write_file_atomically(const fs::path& file, std::string_view content) {
    fs::path temp = file;
    temp += ".tmp-" + std::to_string(::getpid());
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw Failure{temp.string() + ": cannot create (" + errno_text() + ")"};
    const bool written = write_all(fd, content);
    const std::string write_error = written ? std::string{} : errno_text();
    ::close(fd);
    if (!written) throw Failure{temp.string() + ": cannot write (" + write_error + ")"};
    if (::rename(temp.c_str(), file.c_str()) != 0) {
        throw Failure{file.string() + ": cannot rename " + temp.string() + " onto it (" +
                      errno_text() + ")"};
    }
}

void append_line(const fs::path& file, const std::string& line) {
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) throw Failure{file.string() + ": cannot open (" + errno_text() + ")"};
    const bool written = write_all(fd, line + "\n");  // one write: lines never interleave
    const std::string write_error = written ? std::string{} : errno_text();
    ::close(fd);
    if (!written) throw Failure{file.string() + ": cannot append (" + write_error + ")"};
}

/// This run's number for the phase: the count file plus one, under an exclusive lock so two
/// runs at once (a daemon bug the tests look for) still get different numbers.
std::size_t count_this_run(const fs::path& folder, const std::string& phase) {
    const fs::path lock_file = folder / (phase + ".count.lock");
    const int lock = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock < 0) throw Failure{lock_file.string() + ": cannot open (" + errno_text() + ")"};
    while (::flock(lock, LOCK_EX) != 0) {
        if (errno != EINTR) {
            const std::string error = errno_text();
            ::close(lock);
            throw Failure{lock_file.string() + ": cannot lock (" + error + ")"};
        }
    }
    const fs::path count_file = folder / (phase + ".count");
    std::size_t count = 0;
    try {
        if (fs::exists(count_file)) {
            const std::string text = read_file(count_file);
            const auto digits = text.find_first_not_of("0123456789");
            if (digits == 0 || text.find_first_not_of(" \n", digits) != std::string::npos) {
                throw Failure{count_file.string() + ": not a run count"};
            }
            count = std::stoul(text);
        }
        write_file_atomically(count_file, std::to_string(count + 1) + "\n");
    } catch (...) {
        ::close(lock);  // then report what went wrong
        throw;
    }
    ::close(lock);
    return count + 1;
}

std::string read_stdin() {
    std::string prompt;
    char buffer[65536];
    for (;;) {
        const auto got = ::read(STDIN_FILENO, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;  // end, or no usable stdin: what was read is the prompt
        prompt.append(buffer, static_cast<std::size_t>(got));
    }
    return prompt;
}

[[noreturn]] void sleep_forever() {
    for (;;) ::pause();
}

/// What a run knows about itself, for the artifact, the log and the stream-json lines.
struct Run {
    std::string ticket;
    std::string phase;
    std::string board_run;
    std::size_t number = 0;
    fs::path folder;  ///< $BOARD_TICKET_DIR/fake-agent
};

void write_artifact(const Run& run, const std::string& status) {
    const std::string path = require_env("BOARD_ARTIFACT");
    write_file_atomically(
        path,
        "---\nstatus: " + status + "\nsummary: fake " + run.phase + " artifact, run " +
            std::to_string(run.number) + "\n---\n# Fake " + run.phase + " artifact\n\n" +
            "Written by board_fake_agent for " + run.ticket + ", phase " + run.phase + ", run " +
            std::to_string(run.number) + " of this phase (BOARD_RUN " + run.board_run + ").\n");
}

void start_grandchild(const Run& run, bool close_stdio, bool own_session) {
    const pid_t pid = ::fork();
    if (pid < 0) throw Failure{"fork for grandchild: " + errno_text()};
    if (pid == 0) {
        if (own_session) ::setsid();
        if (close_stdio) {
            const int null = ::open("/dev/null", O_RDWR);
            if (null >= 0) {
                ::dup2(null, STDIN_FILENO);
                ::dup2(null, STDOUT_FILENO);
                ::dup2(null, STDERR_FILENO);
            }
        }
        sleep_forever();
    }
    write_file_atomically(run.folder / "grandchild.pid", std::to_string(pid) + "\n");
}

/// Runs `argv` (argv[0] on PATH) with stdout and stderr on /dev/null; true when it exits 0.
bool run_quietly(std::vector<std::string> argv) {
    const pid_t pid = ::fork();
    if (pid < 0) throw Failure{"fork for " + argv.front() + ": " + errno_text()};
    if (pid == 0) {
        const int null = ::open("/dev/null", O_RDWR);
        if (null >= 0) {
            ::dup2(null, STDOUT_FILENO);
            ::dup2(null, STDERR_FILENO);
        }
        std::vector<char*> args;
        for (auto& a : argv) args.push_back(a.data());
        args.push_back(nullptr);
        ::execvp(args[0], args.data());
        ::_exit(127);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void commit_file(const Run& run, const std::string& file) {
    {
        std::ofstream out(file, std::ios::app);
        out << run.ticket << " " << run.phase << " run " << run.number << "\n";
        if (!out) throw Failure{"writing " + file + ": " + errno_text()};
    }
    if (!run_quietly({"git", "add", "--", file}) ||
        !run_quietly({"git",
                      "-c",
                      "user.name=fake-agent",
                      "-c",
                      "user.email=fake-agent@example.test",
                      "commit",
                      "-q",
                      "-m",
                      run.ticket + ": " + file + " (run " + std::to_string(run.number) + ")"}))
        throw Failure{"git add/commit of " + file + " failed"};
}

void flood(long long mib) {
    std::string chunk;
    const std::string line = "flood " + std::string(57, 'x') + "\n";  // 64 bytes
    while (chunk.size() < 65536) chunk += line;
    for (long long i = 0; i < mib * 16; ++i) print(chunk);
}

/// Only what JSON strings may hold unescaped, so the stream-json lines stay valid.
std::string json_safe(std::string text) {
    std::erase_if(
        text, [](char c) { return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20; });
    return text;
}

/// Carries out one action; returns the exit status when the action ends the run.
std::optional<int> carry_out(const Action& action,
                             const Run& run,
                             const std::vector<Action>& line) {
    switch (action.kind) {
        case Action::Kind::artifact:
            if (action.text != "none") write_artifact(run, action.text);
            break;
        case Action::Kind::signal:
            print("<promise>" + action.text + (action.context.empty() ? "" : ": ") +
                  action.context + "</promise>\n");
            break;
        case Action::Kind::question:
            print("<question>" + action.text + "</question>\n");
            break;
        case Action::Kind::exit:
            return static_cast<int>(action.number);
        case Action::Kind::sleep:
            std::this_thread::sleep_for(std::chrono::milliseconds{action.number});
            break;
        case Action::Kind::wait: {
            // A stand-in for an agent still thinking: it polls, the test waits on its output.
            const auto give_up = std::chrono::steady_clock::now() + std::chrono::hours{1};
            while (!fs::exists(run.folder / action.text) &&
                   std::chrono::steady_clock::now() < give_up)
                std::this_thread::sleep_for(std::chrono::milliseconds{20});
            break;
        }
        case Action::Kind::hang:
            if (action.text == "ignore-term") std::signal(SIGTERM, SIG_IGN);
            sleep_forever();
        case Action::Kind::grandchild:
            start_grandchild(run, action.text != "", action.text == "setsid");
            break;
        case Action::Kind::flood:
            flood(action.number);
            break;
        case Action::Kind::no_stdin:
            break;  // acted on before the first action
        case Action::Kind::cost: {
            std::string session = json_safe("fake-" + run.ticket + "-" + run.phase + "-" +
                                            std::to_string(run.number));
            for (const auto& other : line) {
                if (other.kind == Action::Kind::session) {
                    session = other.text;
                    break;
                }
            }
            print(R"({"type":"result","subtype":"success","is_error":false,"total_cost_usd":)" +
                  action.text + R"(,"session_id":")" + session +
                  R"(","result":"fake agent finished"})" + "\n");
            break;
        }
        case Action::Kind::session:
            print(R"({"type":"system","subtype":"init","session_id":")" + action.text + "\"}\n");
            break;
        case Action::Kind::garbage: {
            // Invalid UTF-8 (stray continuation, truncated sequence, overlong, surrogate),
            // NUL, control bytes and an escape sequence, then a newline.
            static constexpr char bytes[] =
                "garbage: \xff\xfe \x80\xbf \xc3\x28 \xe2\x82 \xc0\xaf \xed\xa0\x80 \x00\x01\x02"
                "\x07\x1b[31m\x7f end\n";
            print(std::string_view{bytes, sizeof bytes - 1});
            break;
        }
        case Action::Kind::stderr_text:
            if (!write_all(STDERR_FILENO, action.text + "\n")) {
                throw Failure{"writing stderr: " + errno_text()};
            }
            break;
        case Action::Kind::stdout_text:
            print(action.text + "\n");
            break;
        case Action::Kind::commit:
            commit_file(run, action.text);
            break;
    }
    return std::nullopt;
}

int run_fake_agent() {
    Run run;
    run.phase = require_env("BOARD_PHASE");
    if (run.phase.find_first_not_of("abcdefghijklmnopqrstuvwxyz_-") != std::string::npos) {
        throw Failure{"BOARD_PHASE \"" + run.phase + "\" is not a phase name"};
    }
    const fs::path ticket_dir = require_env("BOARD_TICKET_DIR");
    run.ticket = env_or_empty("BOARD_TICKET");
    run.board_run = env_or_empty("BOARD_RUN");
    run.folder = ticket_dir / "fake-agent";
    std::error_code ec;
    fs::create_directories(run.folder, ec);
    if (ec) throw Failure{run.folder.string() + ": cannot create (" + ec.message() + ")"};
    run.number = count_this_run(run.folder, run.phase);

    std::vector<Action> actions;
    const fs::path script = run.folder / run.phase;
    if (fs::exists(script)) {
        const auto lines = board::fake_agent::split_script(read_file(script));
        if (lines.empty()) throw Failure{script.string() + ": empty script (no line to run)"};
        const auto index = board::fake_agent::line_for_run(lines.size(), run.number);
        auto parsed = board::fake_agent::parse_line(lines[index]);
        if (!parsed.error.empty()) {
            throw Failure{script.string() + " line " + std::to_string(index + 1) + ": " +
                          parsed.error};
        }
        actions = std::move(parsed.actions);
        if (!board::fake_agent::names_artifact(actions)) {
            actions.insert(actions.begin(), Action{Action::Kind::artifact, "complete", {}, 0});
        }
    } else {
        actions = {Action{Action::Kind::artifact, "complete", {}, 0},
                   Action{Action::Kind::signal, "COMPLETE", {}, 0}};
    }

    long long prompt_bytes = -1;
    if (!board::fake_agent::skips_stdin(actions)) {
        const std::string prompt = read_stdin();
        prompt_bytes = static_cast<long long>(prompt.size());
        write_file_atomically(
            run.folder / ("prompt-" + run.phase + "-" + std::to_string(run.number) + ".md"),
            prompt);
    }
    append_line(run.folder / "log",
                "ticket=" + run.ticket + " phase=" + run.phase + " board_run=" + run.board_run +
                    " n=" + std::to_string(run.number) + " pid=" + std::to_string(::getpid()) +
                    " pgid=" + std::to_string(::getpgrp()) + " fds=" + started_with +
                    " prompt_bytes=" + std::to_string(prompt_bytes) +
                    " cwd=" + fs::current_path().string());

    for (const auto& action : actions) {
        if (const auto status = carry_out(action, run, actions)) return *status;
    }
    return 0;
}

}  // namespace

int main() {
    started_with = open_descriptors();
    try {
        return run_fake_agent();
    } catch (const Failure& failure) {
        const std::string message = "board_fake_agent: " + failure.message + "\n";
        write_all(STDERR_FILENO, message);
    } catch (const std::exception& e) {
        const std::string message = "board_fake_agent: " + std::string{e.what()} + "\n";
        write_all(STDERR_FILENO, message);
    }
    return misuse_exit;
}
