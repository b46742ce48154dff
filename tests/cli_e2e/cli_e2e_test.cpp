// The built `board` binary in temporary boards: what a person or a script sees (stdout,
// stderr, exit code) and what ends up in the logs. Agent-side events (runs, questions) are
// appended through the library, as the daemon would.

#include "support/child_process.hpp"

#include <board/codec.hpp>
#include <board/event_log.hpp>

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <cstddef>
#include <fcntl.h>
#include <fstream>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#ifndef BOARD_BINARY
#error "BOARD_BINARY must name the built board executable"
#endif

namespace fs = std::filesystem;
using namespace board;

namespace {

struct Ran {
    int exit_code = -1;
    std::string out;
    std::string err;
};

std::string slurp(const fs::path& path) {
    std::ifstream in{path, std::ios::binary};
    std::ostringstream text;
    text << in.rdbuf();
    return std::move(text).str();
}

/// A scratch board, `board init --prefix P`, removed afterwards.
class TempBoard {
public:
    TempBoard() {
        std::string pattern = (fs::temp_directory_path() / "board-cli-e2e-XXXXXX").string();
        REQUIRE(::mkdtemp(pattern.data()) != nullptr);
        root_ = pattern;
        REQUIRE(run({"init", root_.string(), "--prefix", "P"}).exit_code == 0);
    }

    ~TempBoard() {
        std::error_code ec;
        fs::remove_all(root_, ec);
    }

    TempBoard(const TempBoard&) = delete;
    TempBoard& operator=(const TempBoard&) = delete;

    const fs::path& root() const { return root_; }

    fs::path dir(const std::string& id) const { return root_ / "tickets" / id; }

    std::string log_of(const std::string& id) const { return slurp(dir(id) / "events.jsonl"); }

    /// Runs `board ARGS --board ROOT` with `env` added (NAME=VALUE), as user `ana`.
    Ran board(std::vector<std::string> args, const std::vector<std::string>& env = {}) const {
        args.push_back("--board");
        args.push_back(root_.string());
        return run(std::move(args), env);
    }

    /// `board ARGS` without --board (for init and the no-board case).
    static Ran run(std::vector<std::string> args, const std::vector<std::string>& env = {}) {
        static int counter = 0;
        const fs::path out_file =
            fs::temp_directory_path() /
            ("board-e2e-out-" + std::to_string(::getpid()) + "-" + std::to_string(counter));
        const fs::path err_file =
            fs::temp_directory_path() /
            ("board-e2e-err-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        const pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            const int out = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            ::dup2(out, 1);
            ::dup2(err, 2);
            ::unsetenv("BOARD_RUN");
            ::unsetenv("BOARD_PHASE");
            ::unsetenv("BOARD_DIR");
            ::setenv("USER", "ana", 1);
            for (const auto& pair : env) {
                const auto eq = pair.find('=');
                ::setenv(pair.substr(0, eq).c_str(), pair.substr(eq + 1).c_str(), 1);
            }
            std::vector<char*> argv;
            std::string binary = BOARD_BINARY;
            argv.push_back(binary.data());
            for (auto& a : args) argv.push_back(a.data());
            argv.push_back(nullptr);
            ::execv(binary.c_str(), argv.data());
            ::_exit(127);
        }
        int status = 0;
        ::waitpid(child, &status, 0);
        Ran ran;
        ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        ran.out = slurp(out_file);
        ran.err = slurp(err_file);
        fs::remove(out_file);
        fs::remove(err_file);
        return ran;
    }

    std::string create(const std::string& title, std::vector<std::string> flags = {}) const {
        flags.insert(flags.begin(), {"create", title});
        const auto ran = board(flags);
        REQUIRE(ran.exit_code == 0);
        return ran.out.substr(0, ran.out.find('\n'));
    }

    boost::json::object show(const std::string& id) const {
        const auto ran = board({"show", id, "--json"});
        REQUIRE(ran.exit_code == 0);
        return boost::json::parse(ran.out).as_object();
    }

    /// Appends agent/system events through the library, as the daemon would.
    void append(const std::string& id, const Actor& by, std::vector<Payload> payloads) const {
        const auto result = transact(dir(id), by, [&](const Ticket&) { return payloads; });
        if (const auto* no = std::get_if<Refused>(&result)) FAIL(no->rejection.message);
        REQUIRE(std::holds_alternative<Committed>(result));
    }

    /// One agent run of `phase` that writes its artifact complete and signals `signal`.
    void agent_run(const std::string& id,
                   Status phase,
                   std::optional<Signal> signal = Signal::complete,
                   const std::string& context = {}) const {
        static int runs = 0;
        const std::string run_id = "r" + std::to_string(++runs);
        const Actor system{ActorKind::system, {}};
        const Actor agent{ActorKind::agent, std::string{to_string(phase)}};
        RunPolicy policy;
        policy.gate = phase == Status::planning ? Gate::approval : Gate::none;
        append(id, system, {RunStarted{run_id, phase, 1, 1, policy, {}}});
        if (const auto kind = artifact_of(phase); kind && signal == Signal::complete) {
            ArtifactRecorded artifact;
            artifact.kind = *kind;
            artifact.path = std::string{to_string(*kind)} + ".md";
            artifact.status = ArtifactStatus::complete;
            append(id, agent, {artifact});
        }
        RunFinished finished;
        finished.run = run_id;
        finished.signal = signal;
        finished.context = context;
        append(id, system, {finished});
    }

    /// A new ticket brought to `status` (agent's turn) through the workflow.
    std::string ticket_in(Status status, std::vector<std::string> flags = {}) const {
        const std::string id = create("ticket in " + std::string{to_string(status)}, flags);
        if (status == Status::backlog) return id;
        REQUIRE(board({"start", id}).exit_code == 0);  // → research
        if (status == Status::research) return id;
        agent_run(id, Status::research);  // gate none → ready
        if (status == Status::ready) return id;
        REQUIRE(board({"start", id}).exit_code == 0);  // → planning
        if (status == Status::planning) return id;
        agent_run(id, Status::planning);                 // gate approval
        REQUIRE(board({"approve", id}).exit_code == 0);  // → implementing
        if (status == Status::implementing) return id;
        agent_run(id, Status::implementing);  // → review, the review-prep agent's turn
        REQUIRE(status == Status::review);
        return id;
    }

    static std::string text(const boost::json::object& ticket, const char* field) {
        const auto* v = ticket.if_contains(field);
        return v && v->is_string() ? std::string{v->get_string()} : std::string{"-"};
    }

private:
    fs::path root_;
};

}  // namespace

TEST_CASE("the verdict table of state-machine.md §5, through the CLI", "[e2e][verdict]") {
    TempBoard b;

    struct Row {
        Status status;
        const char* awaiting;
        const char* verdict;
        const char* status_after;
        const char* awaiting_after;  // "-" = the agent's turn
        const char* resolution_after;
    };

    const Row row = GENERATE(values<Row>({
        {Status::backlog, "work", "approve", "done", "-", "completed"},
        {Status::backlog, "work", "reject", "backlog", "-", "-"},
        {Status::implementing, "work", "approve", "done", "-", "completed"},
        {Status::implementing, "work", "reject", "implementing", "-", "-"},
        {Status::research, "approval", "approve", "ready", "-", "-"},
        {Status::research, "approval", "reject", "research", "-", "-"},
        {Status::review, "review", "approve", "done", "-", "completed"},
        {Status::review, "review", "reject", "implementing", "-", "-"},
        {Status::review, "content", "approve", "done", "-", "completed"},
        {Status::review, "content", "reject", "implementing", "-", "-"},
        {Status::research, "input", "approve", "research", "-", "-"},
        {Status::research, "input", "reject", "done", "-", "wont_do"},
        {Status::implementing, "escalation", "approve", "implementing", "-", "-"},
        {Status::implementing, "escalation", "reject", "done", "-", "wont_do"},
        {Status::planning, "checkpoint", "approve", "planning", "-", "-"},
        {Status::planning, "checkpoint", "reject", "planning", "-", "-"},
    }));
    CAPTURE(to_string(row.status), row.awaiting, row.verdict);
    const std::string id = b.ticket_in(row.status);
    if (row.status == Status::review) {
        // The review-prep agent hands over with the row's signal.
        const Signal signal = std::string{row.awaiting} == "review" ? Signal::review_requested
                                                                    : Signal::content_review;
        b.agent_run(id, Status::review, signal, "please look");
    } else {
        REQUIRE(b.board({"update", id, "--awaiting", row.awaiting}).exit_code == 0);
    }
    REQUIRE(TempBoard::text(b.show(id), "awaiting") == row.awaiting);

    const auto ran = b.board({row.verdict, id, "the human's words"});
    CHECK(ran.exit_code == 0);
    CHECK(ran.err.empty());
    const auto after = b.show(id);
    CHECK(TempBoard::text(after, "status") == row.status_after);
    CHECK(TempBoard::text(after, "awaiting") == row.awaiting_after);
    CHECK(TempBoard::text(after, "resolution") == row.resolution_after);
    // The verdict's words reach the agent as a human note, in the same event.
    const auto& notes = after.at("notes").as_array();
    REQUIRE_FALSE(notes.empty());
    CHECK(notes.back().at("text").as_string() == "the human's words");
    CHECK(notes.back().at("from").as_string() == "human");
}

TEST_CASE("requires persists through a rejection and gates the end", "[e2e][requires]") {
    TempBoard b;
    const std::string id = b.ticket_in(Status::implementing, {"--requires", "content"});
    b.agent_run(id, Status::implementing);  // → review
    b.agent_run(id, Status::review);        // review prep done → the requires gate
    auto t = b.show(id);
    CHECK(TempBoard::text(t, "status") == "review");
    CHECK(TempBoard::text(t, "awaiting") == "content");

    const auto bare_no = b.board({"reject", id, ""});
    CHECK(bare_no.exit_code == 1);
    CHECK_THAT(bare_no.err, Catch::Contains("feedback"));
    REQUIRE(b.board({"reject", id, "the copy is off-brand"}).exit_code == 0);
    t = b.show(id);
    CHECK(TempBoard::text(t, "status") == "implementing");
    CHECK(TempBoard::text(t, "requires") == "content");

    // The agent asks only for a review; the declared content gate still comes before done.
    b.agent_run(id, Status::implementing, Signal::review_requested, "PR #3");
    REQUIRE(TempBoard::text(b.show(id), "awaiting") == "review");
    REQUIRE(b.board({"approve", id}).exit_code == 0);
    t = b.show(id);
    CHECK(TempBoard::text(t, "status") == "review");
    CHECK(TempBoard::text(t, "awaiting") == "content");
    REQUIRE(b.board({"approve", id, "on brand now"}).exit_code == 0);
    CHECK(TempBoard::text(b.show(id), "status") == "done");
}

TEST_CASE("reject --comment: each FILE:LINE:TEXT reaches the feedback, a malformed one is usage",
          "[e2e][verdict]") {
    TempBoard b;
    const std::string id = b.ticket_in(Status::implementing);
    b.agent_run(id, Status::implementing);  // → review
    b.agent_run(id, Status::review);        // review prep done → awaiting review
    REQUIRE(TempBoard::text(b.show(id), "awaiting") == "review");
    const auto seq = b.show(id).at("seq").as_int64();

    const auto malformed = b.board({"reject", id, "x", "--comment", "src/a.cpp:twelve:no"});
    CHECK(malformed.exit_code == 2);
    CHECK_THAT(malformed.err, Catch::Contains("the line \"twelve\" is not a number"));
    const auto blank = b.board({"reject", id, "--comment", "src/a.cpp:3:  "});
    CHECK(blank.exit_code == 2);
    CHECK_THAT(blank.err, Catch::Contains("the comment on src/a.cpp:3 is blank"));
    CHECK(b.show(id).at("seq").as_int64() == seq);  // nothing written

    // Comments alone are feedback enough.
    const auto ok = b.board({"reject",
                             id,
                             "--comment",
                             "src/retry.cpp:42:no sleep here",
                             "--comment",
                             "README.md:7:say why: it matters"});
    INFO(ok.err);
    REQUIRE(ok.exit_code == 0);
    const auto notes = b.show(id).at("notes").as_array();
    CHECK(notes.back().at("text").as_string() ==
          "Comments on the diff:\n- src/retry.cpp:42: no sleep here\n- README.md:7: say why: it "
          "matters");
}

TEST_CASE("why: one reason per cause, in words, and what would move it", "[e2e][why]") {
    TempBoard b;
    {  // research holds one ticket at most
        std::string yaml = slurp(b.root() / "board.yaml");
        const auto at = yaml.find("  research: 3");
        REQUIRE(at != std::string::npos);
        yaml.replace(at, 13, "  research: 1");
        std::ofstream(b.root() / "board.yaml") << yaml;
    }
    const auto why = [&](const std::string& id) {
        const auto ran = b.board({"why", id});
        INFO(ran.err);
        CHECK(ran.exit_code == 0);
        return ran.out;
    };
    const auto kind = [&](const std::string& id) {
        const auto ran = b.board({"why", id, "--json"});
        REQUIRE(ran.exit_code == 0);
        const auto json = boost::json::parse(ran.out);
        return std::string{json.at("standing").at("kind").as_string()};
    };

    const std::string researching = b.ticket_in(Status::research);
    const std::string waiting = b.create("waits for research");
    CHECK_THAT(why(waiting),
               Catch::Contains("waits for room in research: it holds 1 of 1 tickets "
                               "(wip.research); it moves when one leaves"));
    CHECK(kind(waiting) == "wip_held");
    CHECK_THAT(b.board({"show", waiting}).out, Catch::Contains("backlog, wip 1/1"));

    const std::string blocked = b.create("after the first", {"--blocked-by", researching});
    CHECK_THAT(why(blocked),
               Catch::Contains("blocked by " + researching + ": it moves when they are done"));

    const std::string ready = b.ticket_in(Status::ready);
    CHECK_THAT(why(ready),
               Catch::Contains("planning does not start by itself (auto.planning is off): "
                               "`board start " +
                               ready + "` starts it"));

    const std::string gated = b.ticket_in(Status::planning);
    b.agent_run(gated, Status::planning);  // the approval gate
    const auto at_gate = why(gated);
    CHECK_THAT(at_gate, Catch::Contains("waits for a person (approval, gate)"));
    CHECK_THAT(at_gate, Catch::Contains("the gate of planning: approval (gates.planning"));
    CHECK_THAT(at_gate, Catch::Contains("board approve " + gated));

    // A failed run: the next attempt waits out its backoff, and the failure is named.
    const Actor system{ActorKind::system, {}};
    b.append(researching, system, {RunStarted{"r90", Status::research, 1, 1, {}, {}}});
    RunFinished failed;
    failed.run = "r90";
    failed.exit_code = 1;
    failed.error = "API Error: 500 overloaded";
    b.append(researching, system, {failed});
    const auto backing_off = why(researching);
    CHECK_THAT(backing_off, Catch::Contains("its last attempt failed: attempt 2 of 3 (research)"));
    CHECK_THAT(
        backing_off,
        Catch::Contains("last failure: run r90 (research) exit 1: API Error: 500 overloaded"));
    CHECK_THAT(backing_off, Catch::Contains("budget: $0 of $10 · attempts 1 of 3"));
    CHECK(kind(researching) == "backing_off");

    const auto unknown = b.board({"why", "P-99"});
    CHECK(unknown.exit_code == 1);
    CHECK_THAT(unknown.err, Catch::Contains("P-99"));
}

TEST_CASE("log --all is the board's timeline, filtered by time, type and actor", "[e2e][log]") {
    TempBoard b;
    const std::string first = b.create("first");
    const std::string second = b.create("second", {"--awaiting", "approval"});
    REQUIRE(b.board({"note", first, "hello", "--from", "human"}).exit_code == 0);
    REQUIRE(b.board({"approve", second, "fine"}).exit_code == 0);

    const auto all = b.board({"log", "--all"});
    REQUIRE(all.exit_code == 0);
    const auto created_first = all.out.find(first + " ");
    const auto approved = all.out.find("verdict");
    CHECK(created_first != std::string::npos);
    CHECK(approved > created_first);  // by time

    const auto verdicts = b.board({"log", "--all", "--type", "verdict", "--json"});
    REQUIRE(verdicts.exit_code == 0);
    CHECK(verdicts.out.find("\"ticket\":\"" + second + "\"") != std::string::npos);
    CHECK(verdicts.out.find("\"type\":\"created\"") == std::string::npos);
    CHECK(std::count(verdicts.out.begin(), verdicts.out.end(), '\n') == 1);

    const auto by_human = b.board({"log", "--all", "--by", "human:ana", "--since", "1h"});
    CHECK(by_human.exit_code == 0);
    std::istringstream lines(by_human.out);
    int count = 0;
    for (std::string line; std::getline(lines, line); ++count)
        CHECK_THAT(line, Catch::Contains("human:ana"));
    CHECK(count >= 4);  // two creations, the note, the verdict
    CHECK(b.board({"log", "--all", "--by", "agent"}).out.empty());
    CHECK(b.board({"log", "--all", "--since", "2999-01-01T00:00:00Z"}).out.empty());

    CHECK(b.board({"log", "--all", "--type", "verdicts"}).exit_code == 2);
    CHECK(b.board({"log", "--all", "--since", "yesterday"}).exit_code == 2);
    CHECK(b.board({"log"}).exit_code == 2);
    CHECK(b.board({"log", first, "--all"}).exit_code == 2);

    // replay past the end of the log says so.
    const auto past = b.board({"replay", first, "--until", "99"});
    CHECK(past.exit_code == 1);
    CHECK_THAT(past.err, Catch::Contains(first + " has no seq 99: its log ends at seq 2"));
}

TEST_CASE("inside an agent run, human-only commands are refused and nothing is written",
          "[e2e][provenance]") {
    TempBoard b;
    const std::string id = b.ticket_in(Status::review);
    b.agent_run(id, Status::review, Signal::approval_needed, "ship?");
    const std::string before = b.log_of(id);
    const std::vector<std::string> inside{"BOARD_RUN=r9", "BOARD_PHASE=review"};

    const std::vector<std::vector<std::string>> attempts{
        {"approve", id},
        {"reject", id, "no"},
        {"cancel", id, "giving up"},
        {"update", id, "--requires", "none"},
        {"update", id, "--awaiting", "none"},
    };
    for (const auto& args : attempts) {
        CAPTURE(args.front());
        const auto ran = b.board(args, inside);
        CHECK(ran.exit_code == 1);
        CHECK_THAT(ran.err, Catch::Contains("only a human can"));
        CHECK(b.log_of(id) == before);
    }
    // A note from inside a run is the agent's, even when it claims otherwise.
    const auto noted = b.board({"note", id, "I think it is fine", "--from", "human"}, inside);
    CHECK(noted.exit_code == 0);
    CHECK_THAT(noted.err, Catch::Contains("--from human ignored"));
    const auto shown = b.show(id);
    const auto& notes = shown.at("notes").as_array();
    CHECK(notes.back().at("from").as_string() == "agent");
    // The same verdict from a person goes through.
    CHECK(b.board({"approve", id}).exit_code == 0);
}

TEST_CASE("questions: listed with their ids, answers validated, answered once",
          "[e2e][questions]") {
    TempBoard b;
    const std::string id = b.ticket_in(Status::research);
    QuestionAsked which;
    which.question_id = "q1";
    which.question = "Which database?";
    which.response_type = ResponseType::choice;
    which.options = {{"pg", "PostgreSQL", "postgres", ""}, {"my", "MySQL", "mysql", ""}};
    QuestionAsked later;
    later.question_id = "q2";
    later.question = "Also add metrics?";
    later.kind = QuestionKind::non_blocking;
    later.response_type = ResponseType::boolean;
    b.append(id, Actor{ActorKind::agent, "research"}, {which, later});
    REQUIRE(TempBoard::text(b.show(id), "awaiting") == "input");

    auto listed = b.board({"questions", "--pending"});
    CHECK(listed.exit_code == 0);
    CHECK_THAT(listed.out, Catch::Contains(id + ".q1"));
    CHECK_THAT(listed.out, Catch::Contains("choice: pg|my"));
    auto json = boost::json::parse(b.board({"questions", "--json"}).out).as_array();
    REQUIRE(json.size() == 2);
    CHECK(json[0].at("id").as_string() == id + ".q1");
    CHECK(json[0].at("ticket").as_string() == id);

    // A verdict is not an answer: the typed answer would be lost.
    const auto verdict = b.board({"approve", id, "postgres"});
    CHECK(verdict.exit_code == 1);
    CHECK_THAT(verdict.err, Catch::Contains("board answer"));

    const std::string before = b.log_of(id);
    const auto wrong = b.board({"answer", id + ".q1", "oracle"});
    CHECK(wrong.exit_code == 1);
    CHECK(wrong.err.rfind("board: answer " + id + ": ", 0) == 0);
    CHECK(b.log_of(id) == before);
    const auto not_bool = b.board({"answer", id + ".q2", "maybe"});
    CHECK(not_bool.exit_code == 1);
    CHECK(b.log_of(id) == before);
    CHECK(b.board({"answer", id + ".q7", "x"}).exit_code == 1);
    CHECK(b.board({"answer", "q1", "x"}).exit_code == 2);

    const auto ok = b.board({"answer", id + ".q1", "PostgreSQL", "--note", "we run it already"});
    CHECK(ok.exit_code == 0);
    auto t = b.show(id);
    CHECK(TempBoard::text(t, "awaiting") == "-");  // back to the agent
    CHECK(t.at("questions").as_array()[0].at("answer").as_string() == "postgres");
    const auto again = b.board({"answer", id + ".q1", "pg"});
    CHECK(again.exit_code == 1);
    CHECK_THAT(again.err, Catch::Contains("answered"));
    CHECK(b.board({"answer", id + ".q2", "true"}).exit_code == 0);
    CHECK(b.board({"questions", "--pending", "--json"}).out == "[]\n");
}

TEST_CASE("replay --diff shows the note an event added, and --until past the end is refused",
          "[e2e][replay]") {
    TempBoard b;
    const std::string id = b.create("noted");
    REQUIRE(b.board({"note", id, "look at net/retry.cpp first", "--from", "human"}).exit_code == 0);
    const auto diff = b.board({"replay", id, "--diff"});
    REQUIRE(diff.exit_code == 0);
    CHECK_THAT(diff.out,
               Catch::Contains("notes: + {from: \"human\", author: \"ana\", text: \"look at "
                               "net/retry.cpp first\""));
    const auto past = b.board({"replay", id, "--until", "99"});
    CHECK(past.exit_code == 1);
    CHECK_THAT(past.err, Catch::Contains(id + " has no seq 99: its log ends at seq 2"));
}

TEST_CASE("cancel-question withdraws a pending question, and the agent's next prompt says why",
          "[e2e][questions]") {
    TempBoard b;
    const std::string id = b.ticket_in(Status::research);
    QuestionAsked which;
    which.question_id = "q1";
    which.question = "Which database?";
    b.append(id, Actor{ActorKind::agent, "research"}, {which});
    REQUIRE(TempBoard::text(b.show(id), "awaiting") == "input");

    CHECK(b.board({"cancel-question", "q1"}).exit_code == 2);
    CHECK(b.board({"cancel-question", id + ".q7"}).exit_code == 1);
    const auto ok = b.board({"cancel-question", id + ".q1", "the plan no longer needs a database"});
    CHECK(ok.exit_code == 0);
    auto t = b.show(id);
    CHECK(TempBoard::text(t, "awaiting") == "-");  // back to the agent
    CHECK(t.at("questions").as_array()[0].at("status").as_string() == "cancelled");
    CHECK_THAT(b.board({"log", id}).out,
               Catch::Contains("question-cancelled q1 \"the plan no longer needs a database\""));
    const auto again = b.board({"cancel-question", id + ".q1"});
    CHECK(again.exit_code == 1);
    CHECK_THAT(again.err, Catch::Contains("cancelled"));
}

TEST_CASE("refusals: one line on stderr, the exit code of spec/cli.md, nothing written",
          "[e2e][refusals]") {
    TempBoard b;
    const std::string id = b.ticket_in(Status::implementing);
    const std::string epic = b.create("An epic", {"-t", "epic"});
    const std::string other = b.create("Another");
    const std::string before = b.log_of(id);

    struct Case {
        std::vector<std::string> args;
        int exit_code;
        std::string stderr_has;
        std::vector<std::string> env = {};
    };

    const std::vector<Case> cases{
        {{"reject", id, "no"},
         1,
         "board: reject " + id + ": the ticket is not awaiting a human (status implementing)\n"},
        {{"approve", id}, 1, "is not awaiting a human"},
        {{"approve", "P-99"}, 1, "no ticket P-99 on this board"},
        {{"note", "nonsense", "x"}, 1, "is not a ticket id"},
        {{"reject", id}, 2, "board: reject: FEEDBACK is required (board reject --help)\n"},
        {{"frobnicate"}, 2, "board: \"frobnicate\" is not a command (board --help)\n"},
        {{"start", id}, 1, "only backlog or ready work can be started"},
        {{"start", epic}, 1, "epics are never run"},
        {{"move", id, "sideways", "--reason", "x"}, 2, "unknown status"},
        {{"move", id, "planning"}, 2, "--reason"},
        {{"move", id, "review", "--reason", "x"}, 1, ""},
        {{"reopen", id}, 1, ""},
        {{"update", id}, 2, "nothing to change"},
        {{"update", id, "--awaiting", "soon"}, 2, "--awaiting takes"},
        {{"update", id, "-p", "9"}, 1, "priority"},
        {{"update", id, "--blocked-by", "P-99"}, 1, "no ticket P-99 on this board"},
        {{"update", id, "--blocked-by", id}, 1, "cannot block itself"},
        {{"update", id, "--parent", other}, 1, "not an epic"},
        {{"fork", id, "--at", "99"}, 1, "outside the log"},
        {{"list", "--status", "nope"}, 2, "--status"},
        {{"list", "--awaiting", "bogus"}, 2, "--awaiting \"bogus\""},
        {{"list", "--frobnicate"}, 2, "board: list: unexpected argument --frobnicate"},
        {{"note", id, "x", "--from", "robot"}, 2, "board: note: --from: robot not in"},
        {{"next", other}, 1, "board: next: " + other + " is a task, not an epic\n"},
        {{"ready", "P-99"}, 1, "board: ready: no ticket P-99 on this board\n"},
        {{"list", "--parent", id}, 1, "board: list --parent: " + id + " is a task, not an epic"},
        // A $USER the log could not name would make a line no reader takes back.
        {{"note", id, "x", "--from", "human"},
         2,
         "\"human:two words\" cannot sign",
         {"USER=two words"}},
        {{"note", id, "x"}, 2, "\"agent:a b\" cannot sign", {"BOARD_RUN=r9", "BOARD_PHASE=a b"}},
        {{"create", "x", "--parent", other}, 1, "not an epic"},
        {{"create", "   "}, 1, "board: create: the title is empty\n"},
        {{"create", "two\nlines"}, 1, "board: create: a title is one line"},
        {{"update", id, "--title", "x\x1b[2J"}, 1, "a title is one line"},
        {{"reject", id, " \n "}, 1, "board: reject " + id + ": the feedback is blank"},
        // What someone typed is quoted printable: the refusal stays one line.
        {{"show", "P-1\nP-2"}, 1, "board: show: \"P-1\\nP-2\" is not a ticket id"},
        {{"replay", id, "--until", "0"}, 2, "--until: \"0\" is not a seq"},
        {{"create", "x", "--blocked-by", "P-99"}, 1, "no ticket P-99"},
        {{"update", id, "--as", "two words", "-p", "1"}, 2, "--as"},
        {{"note", id, "x", "--from", "human", "--as", "agent:review"}, 2, "without ':'"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.args);
        const auto ran = b.board(c.args, c.env);
        CHECK(ran.exit_code == c.exit_code);
        CHECK_THAT(ran.err, Catch::Contains(c.stderr_has));
        // spec/cli.md: one line saying what and why, whoever found the fault (CLI11 included).
        CHECK_THAT(ran.err, Catch::StartsWith("board: "));
        CHECK(std::count(ran.err.begin(), ran.err.end(), '\n') == 1);
        CHECK(ran.out.empty());
        CHECK(b.log_of(id) == before);
    }
    CHECK_FALSE(fs::exists(b.dir("P-5")));  // the refused creates took no id
    // verify reports on stdout; an id that names no ticket is refused (1), not a storage fault.
    const auto unknown = b.board({"verify", "P-99"});
    CHECK(unknown.exit_code == 1);
    CHECK_THAT(unknown.out, Catch::Contains("no ticket P-99"));
    CHECK(b.board({"verify", "nonsense"}).exit_code == 1);

    SECTION("an epic cannot be put inside its own child") {
        const std::string inner = b.create("Inner", {"-t", "epic", "--parent", epic});
        const auto ran = b.board({"update", epic, "--parent", inner});
        CHECK(ran.exit_code == 1);
        CHECK_THAT(ran.err,
                   Catch::Contains(epic + " → " + inner + " → " + epic +
                                   " would be a cycle (each inside the next)"));
    }
    SECTION("a cycle is named in full") {
        REQUIRE(b.board({"update", other, "--blocked-by", id}).exit_code == 0);
        const auto ran = b.board({"update", id, "--blocked-by", other});
        CHECK(ran.exit_code == 1);
        CHECK_THAT(ran.err, Catch::Contains(id + " → " + other + " → " + id + " would be a cycle"));
    }
    SECTION("no board: a usage error that says how to name one") {
        fs::create_directories(b.root() / "nowhere");
        const auto ran = TempBoard::run({"list", "--board", (b.root() / "nowhere").string()});
        CHECK(ran.exit_code == 2);
        CHECK_THAT(ran.err, Catch::Contains("holds no board.yaml"));
        const auto in_env =
            TempBoard::run({"ready"}, {"BOARD_DIR=" + (b.root() / "nowhere").string()});
        CHECK(in_env.exit_code == 2);
    }
    SECTION("a corrupt log is a storage error for its ticket, a warning for the board") {
        std::ofstream{b.dir(other) / "events.jsonl", std::ios::app} << "{broken\n{\"v\":1}\n";
        CHECK(b.board({"show", other}).exit_code == 3);
        CHECK(b.board({"note", other, "x"}).exit_code == 3);
        const auto listed = b.board({"list"});
        CHECK(listed.exit_code == 0);
        CHECK_THAT(listed.err, Catch::Contains(other + " left out"));
        CHECK_THAT(listed.out, Catch::Contains(id));
    }
}

TEST_CASE("text anyone wrote is shown, never obeyed by the terminal", "[e2e][output]") {
    TempBoard b;
    // Labels and lists take spaces after commas, as people type them.
    const std::string id = b.create("Escapes", {"-l", "ui, backend ,", "-d", "one\ntwo"});
    const auto labels = b.show(id).at("labels").as_array();
    CHECK(labels == boost::json::array{"ui", "backend"});
    CHECK(b.board({"list", "--status", "backlog, ready"}).exit_code == 0);

    // An agent's note may hold anything; on a terminal a clear-screen must stay text.
    REQUIRE(b.board({"note", id, "look\x1b[2J here\nsecond line\x07"}).exit_code == 0);
    const auto shown = b.board({"show", id});
    CHECK(shown.out.find('\x1b') == std::string::npos);
    CHECK(shown.out.find('\x07') == std::string::npos);
    CHECK_THAT(shown.out, Catch::Contains("look\\x1b[2J here\n    second line\\x07"));
    CHECK_THAT(shown.out, Catch::Contains("\none\ntwo\n"));  // the description keeps its lines
    const auto logged = b.board({"log", id});
    CHECK(logged.out.find('\x1b') == std::string::npos);
    // JSON carries the text exactly; escaping it is JSON's own.
    CHECK(b.show(id).at("notes").as_array().back().at("text") ==
          "look\x1b[2J here\nsecond line\x07");
}

TEST_CASE("show and verify warn of a log over 10 MB (spec/storage.md)", "[e2e][show]") {
    TempBoard b;
    const std::string id = b.create("Long history");
    CHECK(b.board({"show", id}).err.empty());
    // Two lines of 5.5 MB: a log line holds at most 8 MB.
    for (int i = 0; i < 2; ++i)
        b.append(id, Actor{ActorKind::agent, "research"}, {NoteAdded{std::string(5'500'000, 'x')}});
    const auto shown = b.board({"show", id});
    CHECK(shown.exit_code == 0);
    CHECK_THAT(shown.err,
               Catch::StartsWith("board: warning: " + id + ": the log is long (3 events"));
    CHECK_THAT(b.board({"verify", id}).out, Catch::Contains("warning: the log is long"));
}

TEST_CASE("list, next and ready: shapes, order and the human side", "[e2e][queries]") {
    TempBoard b;
    const std::string epic = b.create("Checkout v2", {"-t", "epic"});
    const std::string child = b.create("Card form", {"--parent", epic, "-p", "1"});
    const std::string urgent = b.create("Hotfix", {"-p", "0"});
    const std::string blocked = b.create("After the hotfix", {"--blocked-by", urgent, "-p", "0"});
    const std::string handed = b.create("Rotate keys", {"--awaiting", "work", "-p", "3"});

    auto list = boost::json::parse(b.board({"list", "--json"}).out).as_array();
    REQUIRE(list.size() == 5);
    CHECK(list[0].at("id").as_string() == urgent);
    for (const char* field : {"id",
                              "title",
                              "type",
                              "priority",
                              "labels",
                              "parent",
                              "blocked_by",
                              "status",
                              "created_at",
                              "updated_at",
                              "seq"})
        CHECK(list[0].as_object().contains(field));
    const auto table = b.board({"list"});
    CHECK(table.out.rfind("ID ", 0) == 0);
    CHECK(table.out.find("\x1b[") == std::string::npos);  // not a terminal: no colour

    // The agent: the urgent one first; the blocked one never; the epic never.
    auto next = b.board({"next", "--json"});
    CHECK(next.exit_code == 0);
    CHECK(boost::json::parse(next.out).at("id").as_string() == urgent);
    auto ready = boost::json::parse(b.board({"ready", "--json"}).out).as_array();
    std::vector<std::string> ready_ids;
    for (const auto& t : ready) ready_ids.emplace_back(t.at("id").as_string());
    CHECK(ready_ids == std::vector<std::string>{urgent, child});
    CHECK(boost::json::parse(b.board({"next", epic, "--json"}).out).at("id").as_string() == child);

    // The human side, and --awaiting never swallows what follows it.
    auto human = b.board({"next", "--awaiting", "--json"});
    CHECK(human.exit_code == 0);
    CHECK(boost::json::parse(human.out).at("id").as_string() == handed);
    CHECK(b.board({"next", "--awaiting", "review", "--json"}).out == "null\n");
    CHECK(b.board({"next", "--awaiting", "review"}).exit_code == 1);
    auto awaiting = boost::json::parse(b.board({"list", "--awaiting", "--json"}).out).as_array();
    REQUIRE(awaiting.size() == 1);
    CHECK(awaiting[0].at("awaiting").as_string() == "work");
    CHECK(b.board({"next", "--awaiting", epic}).exit_code == 1);  // read as the EPIC argument

    // Done work leaves the list and unblocks; the epic completes when its child does.
    REQUIRE(b.board({"update", urgent, "--awaiting", "work"}).exit_code == 0);
    REQUIRE(b.board({"approve", urgent, "done by hand"}).exit_code == 0);
    ready = boost::json::parse(b.board({"ready", "--json"}).out).as_array();
    CHECK(ready[0].at("id").as_string() == blocked);
    REQUIRE(b.board({"cancel", child, "not needed"}).exit_code == 0);
    auto epics = boost::json::parse(b.board({"list", "--all", "--json"}).out).as_array();
    for (const auto& t : epics) {
        if (t.at("id").as_string() != epic) continue;
        CHECK(t.at("status").as_string() == "done");
        CHECK(t.at("children_done").as_int64() == 1);
    }
    // show says what list says: the epic's own log never holds its derived completion.
    const auto shown = b.show(epic);
    CHECK(shown.at("status").as_string() == "done");
    CHECK(shown.at("children").as_int64() == 1);
    CHECK(shown.at("children_done").as_int64() == 1);
    CHECK_THAT(b.board({"show", epic}).out,
               Catch::Contains("done (every child is done)\n  epic: 1 of 1 children done"));
    CHECK(b.board({"list", "--status", "done", "--json"}).out.find(urgent) != std::string::npos);
}

TEST_CASE("what a ticket asks of a person is in next --awaiting, show and the JSON",
          "[e2e][request]") {
    TempBoard b;
    SECTION("an agent that needs input: its words and what to type") {
        const std::string id = b.ticket_in(Status::research);
        b.agent_run(id, Status::research, Signal::input_needed, "Which region: eu or us?");
        const auto next = b.board({"next", "--awaiting"});
        REQUIRE(next.exit_code == 0);
        CHECK_THAT(next.out, Catch::Contains("  awaiting input for "));
        CHECK_THAT(next.out, Catch::Contains(" · asked by agent:research\n"));
        CHECK_THAT(next.out, Catch::Contains("  │ Which region: eu or us?\n"));
        CHECK_THAT(next.out, Catch::Contains("  → board approve " + id + " \"the answer\"\n"));
        CHECK_THAT(b.board({"show", id}).out, Catch::Contains("  │ Which region: eu or us?\n"));

        const auto json = boost::json::parse(b.board({"next", "--awaiting", "--json"}).out);
        const auto& request = json.at("request").as_object();
        CHECK(request.at("kind") == "input");
        CHECK(request.at("words") == "Which region: eu or us?");
        CHECK(request.at("asked_by") == "agent:research");
    }
    SECTION("a question: its text, its choices with their labels, the answer command") {
        const std::string id = b.ticket_in(Status::research);
        const Actor system{ActorKind::system, {}};
        const Actor agent{ActorKind::agent, "research"};
        b.append(id, system, {RunStarted{"r9", Status::research, 1, 1, {}, {}}});
        QuestionAsked asked;
        asked.question_id = "q1";
        asked.question = "Which database?";
        asked.response_type = ResponseType::choice;
        asked.options = {{"pg", "PostgreSQL", "postgres", ""}, {"lite", "SQLite", "sqlite", ""}};
        b.append(id, agent, {asked});
        RunFinished finished;
        finished.run = "r9";
        finished.signal = Signal::input_needed;
        b.append(id, system, {finished});
        const auto next = b.board({"next", "--awaiting"});
        CHECK_THAT(next.out, Catch::Contains("  ? " + id + ".q1 (blocking): Which database?\n"));
        CHECK_THAT(next.out, Catch::Contains("      pg = PostgreSQL\n"));
        CHECK_THAT(next.out, Catch::Contains("  → board answer " + id + ".q1 VALUE\n"));
        const auto json = boost::json::parse(b.board({"next", "--awaiting", "--json"}).out);
        const auto& options = json.at("request").at("questions").at(0).at("options").as_array();
        CHECK(options.at(1).at("label") == "SQLite");
    }
}

TEST_CASE("runs lists a ticket's agent runs, and run prints one safely and follows it",
          "[e2e][runs]") {
    TempBoard b;
    const std::string id = b.ticket_in(Status::research);
    b.agent_run(id, Status::research, Signal::complete);  // run r1 (see agent_run)
    const auto runs_json = boost::json::parse(b.board({"runs", id, "--json"}).out).as_array();
    REQUIRE(runs_json.size() == 1);
    const std::string run{runs_json[0].at("run").as_string()};
    CHECK(runs_json[0].at("phase") == "research");
    CHECK(runs_json[0].at("end") == "finished");
    CHECK(runs_json[0].at("signal") == "COMPLETE");
    const fs::path log{std::string{runs_json[0].at("log").as_string()}};
    const fs::path prompt{std::string{runs_json[0].at("prompt").as_string()}};
    CHECK(log == b.dir(id) / "runs" / (run + "-research.log"));

    const auto table = b.board({"runs", id});
    CHECK_THAT(table.out, Catch::Contains("RUN") && Catch::Contains("COMPLETE"));

    fs::create_directories(log.parent_path());
    { std::ofstream{log} << "thinking\n\x1b[31mred\x1b[0m and a bell\a\nno newline at the end"; }
    { std::ofstream{prompt} << "# Research\nfind out\n"; }
    const auto printed = b.board({"run", id, run});
    CHECK(printed.exit_code == 0);
    CHECK(printed.out == "thinking\n\\x1b[31mred\\x1b[0m and a bell\\x07\nno newline at the end\n");
    CHECK(b.board({"run", id, run, "--prompt"}).out == "# Research\nfind out\n");
    const auto unknown = b.board({"run", id, "9999"});
    CHECK(unknown.exit_code != 0);
    CHECK_THAT(unknown.err, Catch::Contains("has no run 9999"));

    SECTION("--follow prints what arrives until the run ends") {
        const Actor system{ActorKind::system, {}};
        b.append(id, system, {Started{}});
        b.append(id, system, {RunStarted{"r2", Status::planning, 1, 1, {}, {}}});
        const fs::path live = b.dir(id) / "runs" / "r2-planning.log";
        { std::ofstream{live} << "first\n"; }
        board::testing::Child follower = board::testing::spawn(
            {BOARD_BINARY, "run", id, "r2", "--follow", "--board", b.root().string()},
            b.root(),
            "follow");
        REQUIRE(board::testing::wait_until({b.root()}, std::chrono::seconds{30}, [&] {
            return follower.stdout_text() == "first\n";
        }));
        { std::ofstream{live, std::ios::app} << "second\n"; }
        RunFinished finished;
        finished.run = "r2";
        finished.signal = Signal::complete;
        b.append(id, system, {finished});
        CHECK(follower.wait(std::chrono::seconds{30}) == 0);
        CHECK(follower.stdout_text() == "first\nsecond\n");
    }
}

TEST_CASE("diff shows the ticket's branch against the base, or says why not", "[e2e][diff]") {
    TempBoard b;
    const auto git = [&](const std::string& args) {
        const std::string command = "git -C '" + b.root().string() +
                                    "' -c user.name=ana -c user.email=ana@example.test " + args +
                                    " >/dev/null 2>&1";
        REQUIRE(std::system(command.c_str()) == 0);
    };
    git("init -q -b main");
    { std::ofstream{b.root() / "app.txt"} << "one\n"; }
    git("add app.txt board.yaml");
    git("commit -q -m init");
    const std::string id = b.ticket_in(Status::implementing);
    CHECK_THAT(b.board({"diff", id}).err, Catch::Contains("the ticket has no branch"));

    // The implementing run worked on board/<ID>, which holds one commit more than main.
    git("branch board/" + id);
    git("checkout -q board/" + id);
    { std::ofstream{b.root() / "app.txt"} << "one\n\ttwo \x1b[2J\n"; }
    git("commit -q -am 'add two'");
    git("checkout -q main");
    b.append(id,
             Actor{ActorKind::system, {}},
             {RunStarted{"r9", Status::implementing, 1, 1, {}, "board/" + id}});

    const auto diff = b.board({"diff", id});
    INFO(diff.err);
    CHECK(diff.exit_code == 0);
    CHECK_THAT(diff.out, Catch::Contains("+++ b/app.txt"));
    CHECK_THAT(diff.out, Catch::Contains("\n+\ttwo \\x1b[2J\n"));  // tab kept, escape shown
    CHECK_THAT(b.board({"diff", id, "--stat"}).out, Catch::Contains("app.txt | 1 +"));
}

TEST_CASE("init --json says where the board is and its prefix", "[e2e][init]") {
    TempBoard b;
    const fs::path dir = b.root() / "second";
    const auto ran = TempBoard::run({"init", dir.string(), "--prefix", "Q", "--json"});
    REQUIRE(ran.exit_code == 0);
    const auto json = boost::json::parse(ran.out).as_object();
    CHECK(json.at("board").as_string() == dir.string());
    CHECK(json.at("prefix").as_string() == "Q");
    CHECK(fs::exists(dir / "board.yaml"));
    // The private folder is made owner-only and kept out of git from the start.
    CHECK((fs::status(dir / ".board").permissions() & fs::perms::all) == fs::perms::owner_all);
    CHECK(slurp(dir / ".board" / ".gitignore").find("\n*\n") != std::string::npos);
}

TEST_CASE("fork copies the first SEQ events and leaves the original alone", "[e2e][fork]") {
    TempBoard b;
    const std::string id = b.ticket_in(Status::planning);
    const std::string before = b.log_of(id);
    const auto ran = b.board({"fork", id, "--at", "2"});
    REQUIRE(ran.exit_code == 0);
    const std::string copy = ran.out.substr(0, ran.out.find('\n'));
    CHECK(copy != id);
    const auto t = b.show(copy);
    CHECK(TempBoard::text(t, "status") == "research");
    CHECK(t.at("seq").as_int64() == 3);
    CHECK(b.log_of(id) == before);
    CHECK(b.board({"verify"}).exit_code == 0);
}

TEST_CASE("20 concurrent notes on one ticket are all kept", "[e2e][concurrency]") {
    TempBoard b;
    const std::string id = b.create("Busy ticket");
    std::vector<pid_t> children;
    for (int i = 0; i < 20; ++i) {
        const pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            const auto ran = b.board({"note", id, "note " + std::to_string(i), "--from", "human"});
            ::_exit(ran.exit_code);
        }
        children.push_back(child);
    }
    int failures = 0;
    for (const pid_t child : children) {
        int status = 0;
        ::waitpid(child, &status, 0);
        failures += WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
    }
    CHECK(failures == 0);
    const auto notes = b.show(id).at("notes").as_array();
    std::set<std::string> texts;
    for (const auto& n : notes) texts.emplace(n.at("text").as_string());
    CHECK(texts.size() == 20);
    CHECK(b.board({"verify"}).exit_code == 0);
}

TEST_CASE("4 concurrent creates never share an id", "[e2e][concurrency]") {
    TempBoard b;
    std::vector<pid_t> children;
    for (int i = 0; i < 4; ++i) {
        const pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            int failed = 0;
            for (int k = 0; k < 5; ++k)
                failed += b.board({"create", "from " + std::to_string(i)}).exit_code == 0 ? 0 : 1;
            ::_exit(failed);
        }
        children.push_back(child);
    }
    for (const pid_t child : children) {
        int status = 0;
        ::waitpid(child, &status, 0);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
    }
    const auto list = boost::json::parse(b.board({"list", "--json"}).out).as_array();
    std::set<std::string> ids;
    for (const auto& t : list) ids.emplace(t.at("id").as_string());
    CHECK(list.size() == 20);
    CHECK(ids.size() == 20);
    CHECK(ids.count("P-20") == 1);
}

/// Runs `board ARGS --board ROOT` and kills it (as SIGKILL would: no handler, no cleanup)
/// the first time it makes one of `calls`, the system calls that mark the steps of a create.
/// Returns the exit code (128 + the signal when killed). A seccomp filter, installed in the
/// child before exec, makes the moment exact instead of a race with a timer.
int run_killed_at(const TempBoard& b,
                  const std::vector<long>& calls,
                  std::vector<std::string> args,
                  std::string& out) {
#if defined(__x86_64__)
    constexpr std::uint32_t arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
    constexpr std::uint32_t arch = AUDIT_ARCH_AARCH64;
#endif
    std::vector<sock_filter> filter{
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr))};
    for (std::size_t i = 0; i < calls.size(); ++i) {
        const auto to_kill = static_cast<std::uint8_t>(calls.size() - i);
        filter.push_back(
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(calls[i]), to_kill, 0));
    }
    filter.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    filter.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
    const sock_fprog program{static_cast<unsigned short>(filter.size()), filter.data()};

    args.push_back("--board");
    args.push_back(b.root().string());
    const fs::path out_file = b.root() / ("killed-" + std::to_string(::getpid()) + ".out");
    std::string binary = BOARD_BINARY;
    std::vector<char*> argv{binary.data()};
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        const int fd = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        ::dup2(fd, 1);
        const rlimit no_core{0, 0};
        ::setrlimit(RLIMIT_CORE, &no_core);
        ::setenv("USER", "ana", 1);
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
            ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0)
            ::_exit(126);
        ::execv(binary.c_str(), argv.data());
        ::_exit(127);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    out = slurp(out_file);
    fs::remove(out_file);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST_CASE("a create killed at any step leaves no partial ticket behind", "[e2e][concurrency]") {
#if !defined(__x86_64__) && !defined(__aarch64__)
    SKIP("the seccomp filter knows only x86-64 and arm64 system call numbers");
#endif
    TempBoard b;
    const fs::path tickets = b.root() / "tickets";
    // The steps of a create, in order: a folder made durable, the log line written and
    // synced, the snapshot renamed into place, the ticket renamed into place.
    const std::vector<std::pair<std::string, std::vector<long>>> steps{
        {"the first fsync", {SYS_fsync}},
        {"the first write", {SYS_write}},
        {"the first fdatasync", {SYS_fdatasync}},
#ifdef SYS_rename
        {"the first rename", {SYS_rename, SYS_renameat, SYS_renameat2}},
#else
        {"the first rename", {SYS_renameat, SYS_renameat2}},
#endif
        {"the first renameat2", {SYS_renameat2}},
    };
    std::set<std::string> acknowledged;
    int killed = 0;
    for (const auto& [step, calls] : steps) {
        std::string out;
        const int code = run_killed_at(b, calls, {"create", "killed at " + step}, out);
        INFO("killed at " << step << ": exit " << code);
        CHECK((code == 0 || code == 128 + SIGSYS));
        killed += code == 128 + SIGSYS ? 1 : 0;
        if (code == 0) acknowledged.insert(out.substr(0, out.find('\n')));

        // After every kill, whatever the step: readers see whole tickets only.
        for (const auto& entry : fs::directory_iterator(tickets)) {
            const std::string name = entry.path().filename();
            if (!entry.is_directory() || name.front() == '.') continue;
            INFO("ticket folder " << name);
            CHECK(fs::exists(entry.path() / "events.jsonl"));
            CHECK(fs::file_size(entry.path() / "events.jsonl") > 0);
        }
        const auto verify = b.board({"verify"});
        CHECK(verify.exit_code == 0);
        CHECK(verify.err == "");
        const auto list = b.board({"list", "--json"});
        CHECK(list.exit_code == 0);
        CHECK(list.err == "");
    }
    CHECK(killed == static_cast<int>(steps.size()));
    // The next create is whole, and numbers never handed out are taken again.
    const std::string next = b.create("after the kills");
    CHECK(next == "P-1");
    CHECK(b.show(next).at("title").as_string() == "after the kills");
    CHECK(b.board({"verify"}).exit_code == 0);
}

TEST_CASE("caches never win over the log: a daemon's append shows at once", "[e2e][cache]") {
    TempBoard b;
    const std::string id = b.create("Cached");
    REQUIRE(b.board({"list", "--json"}).exit_code == 0);  // builds the index
    REQUIRE(fs::exists(b.dir(id) / "ticket.json"));       // written by create, for people
    // The daemon appends through the library and leaves the snapshot behind.
    b.append(id, Actor{ActorKind::system, {}}, {Started{}});
    b.append(id, Actor{ActorKind::human, "bo"}, {NoteAdded{"behind the cache's back"}});
    const auto list = boost::json::parse(b.board({"list", "--json"}).out).as_array();
    REQUIRE(list.size() == 1);
    CHECK(list[0].at("status").as_string() == "research");
    CHECK(list[0].at("notes_count").as_int64() == 1);
    const auto verified = b.board({"verify", id});
    CHECK(verified.exit_code == 0);
    // A snapshot that lies about the current seq is a fault (a CLI write refreshes it first).
    REQUIRE(b.board({"note", id, "refreshes ticket.json"}).exit_code == 0);
    std::string snapshot = slurp(b.dir(id) / "ticket.json");
    const auto at = snapshot.find("\"title\":\"Cached\"");
    REQUIRE(at != std::string::npos);
    snapshot.replace(at, 16, "\"title\":\"Lied!\"");
    std::ofstream{b.dir(id) / "ticket.json", std::ios::trunc} << snapshot;
    CHECK(b.board({"verify", id}).exit_code == 3);
}

namespace {

/// The ticket as a fold of its log says it is, with no cache in the way.
Ticket fold_of(const TempBoard& b, const std::string& id) {
    auto loaded = load_ticket(b.dir(id));
    REQUIRE(std::holds_alternative<Loaded>(loaded));
    return std::get<Loaded>(std::move(loaded)).ticket;
}

/// What the three queries print, for comparing one state of the board with another.
struct Answers {
    std::string list;
    std::string next;
    std::vector<std::string> shows;
    friend bool operator==(const Answers&, const Answers&) = default;
};

Answers answers(const TempBoard& b, const std::vector<std::string>& ids) {
    Answers out;
    const auto list = b.board({"list", "--all", "--json"});
    const auto next = b.board({"next", "--json"});
    REQUIRE(list.exit_code == 0);
    REQUIRE(next.exit_code == 0);
    out.list = list.out;
    out.next = next.out;
    for (const auto& id : ids) {
        const auto shown = b.board({"show", id, "--json"});
        REQUIRE(shown.exit_code == 0);
        out.shows.push_back(shown.out);
    }
    return out;
}

/// `list`, `next` and `show` say what a fold of each log says.
void check_queries_agree_with_the_logs(const TempBoard& b,
                                       const std::vector<std::string>& ids,
                                       const std::string& expected_next) {
    const Answers now = answers(b, ids);
    const auto list = boost::json::parse(now.list).as_array();
    REQUIRE(list.size() == ids.size());
    for (const auto& item : list) {
        const auto& listed = item.as_object();
        const Ticket folded = fold_of(b, std::string{listed.at("id").as_string()});
        CHECK(listed.at("title").as_string() == folded.title);
        CHECK(listed.at("status").as_string() == to_string(folded.status));
        CHECK(listed.at("seq").as_int64() == folded.seq);
        CHECK(listed.at("notes_count").as_int64() ==
              static_cast<std::int64_t>(folded.notes.size()));
    }
    for (std::size_t i = 0; i < ids.size(); ++i) {
        INFO(ids[i]);
        // `show` adds what the log alone cannot say (the standing on the board): the rest
        // is the fold.
        auto shown = boost::json::parse(now.shows[i]).as_object();
        CHECK(shown.erase("standing") == 1);
        CHECK(boost::json::value(shown) == boost::json::parse(encode_ticket(fold_of(b, ids[i]))));
    }
    CHECK(boost::json::parse(now.next).as_object().at("id").as_string() == expected_next);
}

}  // namespace

TEST_CASE("caches are caches: a hand edit, a plain append or a copied log shows in the next query",
          "[e2e][cache]") {
    TempBoard b;
    const std::vector<std::string> ids = {
        b.create("First"), b.create("Second", {"--priority", "1"}), b.create("Third")};
    REQUIRE(ids[1] == "P-2");
    check_queries_agree_with_the_logs(b, ids, "P-2");  // and the index is written

    // 1. ticket.json edited by hand, keeping its seq: another title, status done.
    std::string snapshot = slurp(b.dir("P-2") / "ticket.json");
    snapshot.replace(snapshot.find("\"Second\""), 8, "\"Edited\"");
    snapshot.replace(snapshot.find("\"status\":\"backlog\""), 18, "\"status\":\"done\"");
    std::ofstream{b.dir("P-2") / "ticket.json", std::ios::trunc} << snapshot;
    check_queries_agree_with_the_logs(b, ids, "P-2");
    CHECK(slurp(b.dir("P-2") / "ticket.json") == snapshot);  // a query never rewrites it

    // 2. A valid event appended to a log with a plain file write: P-2 is cancelled.
    const Event cancelled{event_schema_version,
                          fold_of(b, "P-2").seq + 1,
                          "appended-by-hand",
                          fold_of(b, "P-2").updated_at + 1,
                          Actor{ActorKind::human, "ed"},
                          Cancelled{"done by hand"}};
    std::ofstream{b.dir("P-2") / "events.jsonl", std::ios::app | std::ios::binary}
        << encode_event(cancelled) << '\n';
    check_queries_agree_with_the_logs(b, ids, "P-1");
    CHECK(fold_of(b, "P-2").status == Status::done);

    // 3. A log replaced with `cp` from another board: P-1 becomes that board's P-1.
    TempBoard other;
    other.create("Copied in", {"--priority", "0"});
    REQUIRE(other.board({"note", "P-1", "a note from the other board"}).exit_code == 0);
    REQUIRE(std::system(("cp " + (other.dir("P-1") / "events.jsonl").string() + " " +
                         (b.dir("P-1") / "events.jsonl").string())
                            .c_str()) == 0);
    check_queries_agree_with_the_logs(b, ids, "P-1");
    CHECK(fold_of(b, "P-1").title == "Copied in");

    // Deleting every cache changes no query's output.
    const Answers with_caches = answers(b, ids);
    fs::remove(b.root() / "tickets" / ".index");
    for (const auto& id : ids) fs::remove(b.dir(id) / "ticket.json");
    CHECK(answers(b, ids) == with_caches);
}

TEST_CASE("a done ticket owed its shipping stands at 'ship' in list as in show, index or not",
          "[e2e][cache]") {
    TempBoard b;
    const std::string id = b.ticket_in(Status::implementing);
    // Its implementing run worked on the ticket's branch; a person took the work over and
    // approved it: done, and owed its shipping.
    const Actor system{ActorKind::system, {}};
    b.append(id, system, {RunStarted{"r90", Status::implementing, 1, 1, {}, "board/" + id}});
    b.append(id, system, {RunInterrupted{"r90", "stopped"}});
    REQUIRE(b.board({"update", id, "--awaiting", "work"}).exit_code == 0);
    REQUIRE(b.board({"approve", id, "finished by hand"}).exit_code == 0);
    const auto shown = b.show(id);
    REQUIRE(TempBoard::text(shown, "status") == "done");
    REQUIRE(shown.at("standing").at("kind").as_string() == "shipping");

    const auto listed_standing = [&] {
        const auto ran = b.board({"list", "--all", "--json"});
        REQUIRE(ran.exit_code == 0);
        const auto listed = boost::json::parse(ran.out);
        for (const auto& entry : listed.as_array())
            if (entry.at("id").as_string() == id) return entry.at("standing");
        FAIL(id << " is not in list --all");
        return boost::json::value{};
    };
    // The first list folds the log and writes the index; the second reads that index line.
    CHECK(listed_standing() == shown.at("standing"));
    CHECK(listed_standing() == shown.at("standing"));
    fs::remove(b.root() / "tickets" / ".index");
    CHECK(listed_standing() == shown.at("standing"));
}

TEST_CASE("bash completion comes from the command table and completes ticket ids",
          "[e2e][completion]") {
    // The script asks `board` for the ids: the one built here, first on PATH.
    const std::string path = "PATH=" + fs::path{BOARD_BINARY}.parent_path().string() + ":$PATH ";
    TempBoard b;
    const std::string id = b.create("Complete me");
    const auto script = TempBoard::run({"completion", "bash"});
    REQUIRE(script.exit_code == 0);
    const fs::path file = b.root() / "completion.bash";
    std::ofstream{file} << script.out;
    const auto complete = [&](const std::string& words, int cword) {
        const fs::path out = b.root() / "completion.out";
        const std::string command = path + "bash -c 'source " + file.string() + "; COMP_WORDS=(" +
                                    words + "); COMP_CWORD=" + std::to_string(cword) +
                                    "; _board; echo \"${COMPREPLY[*]}\"' > " + out.string();
        REQUIRE(std::system(command.c_str()) == 0);
        return slurp(out);
    };
    CHECK(complete("board app", 1) == "approve\n");
    CHECK(complete("board update P-1 --blocked", 3) == "--blocked-by\n");
    CHECK(complete("board list --status imp", 3) == "implementing\n");
    CHECK(complete("board show --board " + b.root().string() + " P-", 4) == id + "\n");
    CHECK(TempBoard::run({"completion", "tcsh"}).exit_code == 2);
}

// ---------------------------------------------------------------------------------------------
// board import-ticks: the hand-written tk fixtures in tests/fixtures/ticks/.

namespace {

fs::path ticks_fixture(const std::string& name) {
    return fs::path{__FILE__}.parent_path().parent_path() / "fixtures" / "ticks" / name / ".tick";
}

/// Every entry under `root`: its kind, size, content and mtime, to show nothing was touched.
std::map<std::string, std::string> tree_state(const fs::path& root) {
    std::map<std::string, std::string> out;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
        const auto stamp = entry.last_write_time().time_since_epoch().count();
        std::string state = std::to_string(stamp);
        if (entry.is_regular_file()) state += "\n" + slurp(entry.path());
        out[fs::relative(entry.path(), root).string()] = state;
    }
    return out;
}

/// Ticket folders on the board (the catalog's `.index` cache may be there without one).
std::size_t ticket_folders(const TempBoard& b) {
    std::size_t n = 0;
    for (const auto& entry : fs::directory_iterator(b.root() / "tickets"))
        n += entry.is_directory();
    return n;
}

std::vector<std::string> strings_of(const boost::json::value& v) {
    std::vector<std::string> out;
    for (const auto& s : v.as_array()) out.emplace_back(s.as_string());
    return out;
}

std::string str(const boost::json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_string() ? std::string{v->as_string()} : std::string{};
}

}  // namespace

TEST_CASE("import-ticks reproduces every tick's state and reports what it cannot map",
          "[e2e][import]") {
    TempBoard b;
    const fs::path source = ticks_fixture("shop");
    const auto before = tree_state(source.parent_path());

    // A dry run reports and writes nothing.
    const auto dry = b.board({"import-ticks", source.string(), "--dry-run"});
    INFO(dry.err);
    REQUIRE(dry.exit_code == 0);
    CHECK_THAT(dry.out, Catch::Contains("Would import 14 tick(s)"));
    CHECK(ticket_folders(b) == 0);

    const auto ran = b.board({"import-ticks", source.string(), "--json"}, {"TZ=UTC"});
    INFO(ran.err);
    REQUIRE(ran.exit_code == 0);
    const auto report = boost::json::parse(ran.out).as_object();
    CHECK(report.at("imported").as_int64() == 14);
    CHECK_FALSE(report.at("dry_run").as_bool());
    std::map<std::string, std::string> id;
    for (const auto& t : report.at("tickets").as_array())
        id[str(t.as_object(), "tick")] = str(t.as_object(), "id");
    REQUIRE(id.size() == 14);
    // Parents and blockers are created before the tickets that name them.
    const auto number = [&](const std::string& tick) { return std::stoi(id[tick].substr(2)); };
    CHECK(number("ep1") < number("a01"));
    CHECK(number("a01") < number("b02"));
    CHECK(number("b02") < number("f06"));
    CHECK(number("l12") < number("k11"));

    std::set<std::string> unmapped;
    for (const auto& u : report.at("unmapped").as_array()) {
        const auto& o = u.as_object();
        unmapped.insert(str(o, "tick") + " " + str(o, "field") + " " + str(o, "value"));
        CHECK_FALSE(str(o, "why").empty());
    }
    CHECK(unmapped == std::set<std::string>{
                          R"(f06 blocked_by "zzz")",  // not in the folder
                          R"(g07 parent "a01")",      // a task, not an epic
                          R"(g07 after ["a01"])",     // no soft order on the board
                          R"(g07 external_ref "GH-412")",
                          R"(g07 run {"id":"r-7","cost":4.2E-1})",  // not tk's schema
                          R"(l12 blocked_by "k11")",                // would close a cycle
                          R"(j10 verdict "approved")",              // tk had not applied it
                          R"(ep2 status "in_progress")",            // epics are never run
                      });
    CHECK(strings_of(report.at("not_kept")) ==
          std::vector<std::string>{"owner", "created_by", "updated_at"});

    // Each ticket's state, as show --json prints it.
    const auto a01 = b.show(id["a01"]);
    CHECK(str(a01, "title") == "Card form validation");
    CHECK(str(a01, "status") == "backlog");
    CHECK_FALSE(a01.contains("awaiting"));
    CHECK(a01.at("priority").as_int64() == 0);
    CHECK(str(a01, "type") == "task");
    CHECK(strings_of(a01.at("labels")) ==
          std::vector<std::string>{"backend", "payments", "tk:a01"});
    CHECK(str(a01, "parent") == id["ep1"]);
    CHECK(str(a01, "description") ==
          "Validate card number, expiry and CVC before submitting.\n\n"
          "Acceptance criteria:\nInvalid cards are refused client-side.");
    CHECK(str(a01, "created_at") == "2026-01-11T09:30:00.000Z");
    const auto& notes = a01.at("notes").as_array();
    REQUIRE(notes.size() == 2);
    CHECK(str(notes[0].as_object(), "from") == "agent");
    CHECK(str(notes[0].as_object(), "text") == "Looked at the Luhn check in utils/card.ts");
    CHECK(str(notes[0].as_object(), "at") == "2026-01-11T10:15:00.000Z");
    CHECK(str(notes[1].as_object(), "from") == "human");
    CHECK(str(notes[1].as_object(), "author") == "ana");
    CHECK(str(notes[1].as_object(), "text") ==
          "Reuse the validator from the old form\nit already handles Amex");

    const auto b02 = b.show(id["b02"]);
    CHECK(str(b02, "status") == "research");  // in_progress: started by hand
    CHECK(str(b02, "awaiting") == "input");
    CHECK(str(b02, "requires") == "review");
    CHECK(str(b02, "type") == "feature");
    CHECK(strings_of(b02.at("blocked_by")) == std::vector<std::string>{id["a01"]});
    CHECK(str(b02, "parent") == id["ep1"]);
    REQUIRE(b02.at("notes").as_array().size() == 1);
    CHECK(str(b02.at("notes").as_array()[0].as_object(), "from") == "agent");

    const auto c03 = b.show(id["c03"]);
    CHECK(str(c03, "status") == "done");
    CHECK(str(c03, "resolution") == "completed");
    CHECK(str(c03, "type") == "bug");
    const auto& c03_notes = c03.at("notes").as_array();
    REQUIRE(c03_notes.size() == 2);
    CHECK(str(c03_notes[0].as_object(), "from") == "human");
    CHECK(str(c03_notes[0].as_object(), "text") == "Verified on staging");
    CHECK(str(c03_notes[1].as_object(), "text") == "fixed in 1.2");  // closed_reason

    const auto d04 = b.show(id["d04"]);
    CHECK(str(d04, "status") == "done");
    CHECK(str(d04, "resolution") == "wont_do");  // tk closed it on a rejection
    CHECK(d04.at("priority").as_int64() == 4);

    CHECK(str(b.show(id["e05"]), "awaiting") == "work");  // legacy manual: true
    const auto f06 = b.show(id["f06"]);
    CHECK(str(f06, "awaiting") == "approval");
    CHECK(str(f06, "requires") == "approval");
    CHECK(strings_of(f06.at("blocked_by")) == std::vector<std::string>{id["b02"]});
    const auto g07 = b.show(id["g07"]);
    CHECK(str(g07, "awaiting") == "checkpoint");
    CHECK(str(g07, "parent").empty());
    const auto h08 = b.show(id["h08"]);
    CHECK(str(h08, "status") == "research");
    CHECK(str(h08, "awaiting") == "escalation");
    CHECK(str(b.show(id["i09"]), "awaiting") == "content");
    CHECK(str(b.show(id["j10"]), "awaiting") == "review");
    CHECK(strings_of(b.show(id["k11"]).at("blocked_by")) == std::vector<std::string>{id["l12"]});
    CHECK(b.show(id["l12"]).at("blocked_by").as_array().empty());
    const auto ep2 = b.show(id["ep2"]);
    CHECK(str(ep2, "status") == "backlog");
    CHECK(str(ep2, "type") == "epic");

    // list sees them all, and finds one by its origin label.
    const auto all = b.board({"list", "--all", "--json"});
    REQUIRE(all.exit_code == 0);
    CHECK(boost::json::parse(all.out).as_array().size() == 14);
    const auto by_label = b.board({"list", "--all", "-l", "tk:c03", "--json"});
    REQUIRE(by_label.exit_code == 0);
    const auto found = boost::json::parse(by_label.out).as_array();
    REQUIRE(found.size() == 1);
    CHECK(str(found[0].as_object(), "id") == id["c03"]);

    const auto verified = b.board({"verify"});
    INFO(verified.out);
    CHECK(verified.exit_code == 0);
    CHECK_THAT(verified.out, Catch::Contains("14 ticket(s) checked, all hold"));

    // A second import is refused and writes nothing.
    const auto again = b.board({"import-ticks", source.parent_path().string()});
    CHECK(again.exit_code == 1);
    CHECK_THAT(again.err, Catch::Contains("already imported"));
    CHECK(boost::json::parse(b.board({"list", "--all", "--json"}).out).as_array().size() == 14);

    CHECK(tree_state(source.parent_path()) == before);  // the source was only read
}

TEST_CASE("import-ticks: the text report, a malformed tick, a folder that is not tk's",
          "[e2e][import]") {
    TempBoard b;
    const auto ran = b.board({"import-ticks", ticks_fixture("shop").parent_path().string()});
    INFO(ran.err);
    REQUIRE(ran.exit_code == 0);
    CHECK_THAT(ran.out, Catch::Contains("Imported 14 tick(s)"));
    CHECK_THAT(ran.out, Catch::Contains("Not mapped (8):"));
    CHECK_THAT(ran.out,
               Catch::Contains("f06    blocked_by: \"zzz\" (no such tick in this .tick folder)"));
    CHECK_THAT(ran.out, Catch::Contains("Not kept for any tick: owner, created_by, updated_at"));

    TempBoard empty;
    const fs::path broken = ticks_fixture("broken");
    const auto before = tree_state(broken);
    const auto bad = empty.board({"import-ticks", broken.string()});
    CHECK(bad.exit_code == 1);
    CHECK_THAT(bad.err, Catch::Contains("issues/zz9.json:7:3: not valid JSON"));
    CHECK_THAT(bad.err, Catch::Contains("nothing imported"));
    CHECK(bad.out.empty());
    CHECK(ticket_folders(empty) == 0);
    CHECK(tree_state(broken) == before);

    const auto not_tk = empty.board({"import-ticks", empty.root().string()});
    CHECK(not_tk.exit_code == 2);
    CHECK_THAT(not_tk.err, Catch::Contains("no .tick/issues/"));

    const auto in_run =
        empty.board({"import-ticks", broken.string()}, {"BOARD_RUN=r1", "BOARD_PHASE=research"});
    CHECK(in_run.exit_code == 1);
    CHECK_THAT(in_run.err, Catch::Contains("only a human imports"));
}

TEST_CASE("import-ticks: other files in issues/ are reported, a misnamed tick is refused",
          "[e2e][import]") {
    TempBoard b;
    const fs::path issues = b.root() / "old" / ".tick" / "issues";
    fs::create_directories(issues);
    const auto write = [&](const std::string& name, const std::string& text) {
        std::ofstream{issues / name} << text;
    };
    write("x1.json", R"({"id":"x1","title":"One","status":"open","priority":2,"type":"task",
                         "created_at":"2026-01-10T09:00:00Z"})");
    write("README.md", "not a tick\n");
    const auto ran = b.board({"import-ticks", (b.root() / "old").string(), "--json"});
    INFO(ran.err);
    REQUIRE(ran.exit_code == 0);
    const auto report = boost::json::parse(ran.out).as_object();
    CHECK(report.at("imported").as_int64() == 1);
    const auto& unmapped = report.at("unmapped").as_array();
    REQUIRE(unmapped.size() == 1);
    CHECK(str(unmapped[0].as_object(), "tick") == "README.md");
    CHECK(str(unmapped[0].as_object(), "field") == "file");

    TempBoard other;
    write("x2.json", R"({"id":"x3","title":"Two","status":"open","priority":2,"type":"task",
                         "created_at":"2026-01-10T09:00:00Z"})");
    const auto misnamed = other.board({"import-ticks", (b.root() / "old" / ".tick").string()});
    CHECK(misnamed.exit_code == 1);
    CHECK_THAT(misnamed.err, Catch::Contains("x2.json: field \"id\": \"x3\" does not match"));
    CHECK(ticket_folders(other) == 0);
}

TEST_CASE("doctor: a missing agent fails, a board that can run passes", "[e2e][doctor]") {
    TempBoard b;
    const fs::path yaml = b.root() / "board.yaml";
    // board init's Claude Code, with no `claude` on PATH and no git repository.
    auto ran = b.board({"doctor"}, {"PATH=/nonexistent"});
    CHECK(ran.exit_code == 1);
    CHECK(ran.out.find("FAIL     agent claude (research, planning, implementing, review): "
                       "`claude` was not found on PATH") != std::string::npos);
    CHECK(ran.out.find("FAIL     git: implementing runs in a git worktree") != std::string::npos);
    INFO(ran.out);

    // A program of the text protocol, no worktree: everything holds.
    std::ofstream(yaml, std::ios::trunc)
        << "prefix: P\nagents:\n  default: { command: [/bin/true] }\n"
           "  implementing: { worktree: false }\n";
    ran = b.board({"doctor", "--json"});
    INFO(ran.out << ran.err);
    CHECK(ran.exit_code == 0);
    const auto checks = boost::json::parse(ran.out).as_array();
    REQUIRE(checks.size() >= 3);
    CHECK(checks[1].at("check").as_string() ==
          "agent /bin/true (research, planning, implementing, review)");
    CHECK(checks[1].at("verdict").as_string() == "ok");
}

namespace {

/// A log written as if lived: each event `minutes` after `start`, numbered in order.
struct Lived {
    UnixMillis start;
    std::vector<Event> events;

    void at(int minutes, Actor by, Payload payload) {
        const auto n = events.size() + 1;
        events.push_back(Event{event_schema_version,
                               0,
                               "e" + std::to_string(n),
                               start + minutes * 60'000LL,
                               std::move(by),
                               std::move(payload)});
    }
};

ArtifactRecorded complete(ArtifactKind kind, std::string path) {
    return ArtifactRecorded{
        kind, std::move(path), ArtifactStatus::complete, "done", std::string(64, 'a'), {}};
}

RunFinished finished(std::string run, double cost) {
    RunFinished f;
    f.run = std::move(run);
    f.signal = Signal::complete;
    f.cost_usd = cost;
    return f;
}

}  // namespace

TEST_CASE("stats: figures of a board whose answer is known", "[e2e][stats]") {
    TempBoard b;
    const Actor ana{ActorKind::human, "ana"}, bob{ActorKind::human, "bob"}, system{};
    const auto agent = [](Status phase) {
        return Actor{ActorKind::agent, std::string{to_string(phase)}};
    };
    const UnixMillis start = wall_clock_now() - 24 * 3'600'000LL;  // a day ago

    // P-1: every phase, then 60 minutes waiting for bob's review: done after 4h10m.
    Lived one{start, {}};
    Created c1;
    c1.ticket = "P-1";
    c1.title = "done in 250 minutes";
    one.at(0, ana, c1);
    one.at(10, system, RunStarted{"r1", Status::research, 1, 1, {}, {}});
    one.at(40, agent(Status::research), complete(ArtifactKind::research, "research.md"));
    one.at(40, system, finished("r1", 0.10));
    one.at(60, ana, Started{});
    one.at(70, system, RunStarted{"r2", Status::planning, 1, 1, {}, {}});
    one.at(100, agent(Status::planning), complete(ArtifactKind::plan, "plan.md"));
    one.at(100, system, finished("r2", 0.20));
    one.at(110, system, RunStarted{"r3", Status::implementing, 1, 1, {}, {}});
    one.at(170,
           agent(Status::implementing),
           complete(ArtifactKind::implementation_log, "implementation.md"));
    one.at(170, system, finished("r3", 0.30));
    one.at(180, system, RunStarted{"r4", Status::review, 1, 1, {}, {}});
    one.at(190, agent(Status::review), complete(ArtifactKind::review, "review.md"));
    one.at(190, system, finished("r4", 0.05));
    one.at(250, bob, VerdictGiven{Verdict::approved, "ship it"});

    // P-2: cancelled after half an hour.
    Lived two{start, {}};
    Created c2;
    c2.ticket = "P-2";
    c2.title = "not needed";
    two.at(0, ana, c2);
    two.at(30, ana, Cancelled{"not needed"});

    // P-3: its research agent asks a question at minute 10; ana answers it at 75.
    Lived three{start, {}};
    Created c3;
    c3.ticket = "P-3";
    c3.title = "asks";
    three.at(0, ana, c3);
    three.at(5, system, RunStarted{"r1", Status::research, 1, 1, {}, {}});
    QuestionAsked q;
    q.question_id = "q1";
    q.question = "SQLite or Postgres?";
    three.at(10, agent(Status::research), q);
    RunFinished stopped;
    stopped.run = "r1";
    three.at(15, system, stopped);
    three.at(75, ana, QuestionAnswered{"q1", "sqlite", ""});

    for (auto* lived : {&one, &two, &three}) {
        const auto& id = std::get<Created>(lived->events.front().payload).ticket;
        fs::create_directories(b.dir(id));
        REQUIRE(std::holds_alternative<Committed>(append_events(b.dir(id), lived->events, 0)));
    }
    const auto text = b.board({"stats", "--since", "48h"});
    REQUIRE(text.exit_code == 0);
    INFO(text.out);
    CHECK_THAT(text.out, Catch::Contains("throughput    1 completed, 1 cancelled, 3 created"));
    CHECK_THAT(text.out, Catch::Contains("cycle time    p50 4h10m · p90 4h10m · max 4h10m (1)"));
    CHECK_THAT(text.out,
               Catch::Contains(
                   "cost          $0.65 in all, $0.65 per completed ticket; 4 runs, 0 failed"));
    CHECK_THAT(
        text.out,
        Catch::Contains("questions     1 asked by 1 tickets, 1 answered (p50 1h05m · p90 1h05m · "
                        "max 1h05m (1)), 0 timed out (0%)"));
    CHECK_THAT(text.out, Catch::Contains("  review       p50 1h00m"));
    // The question held the ticket from the moment it was asked.
    CHECK_THAT(text.out, Catch::Contains("  input        p50 1h05m"));
    // 250 minutes: agents 30+30+60+10, bob 60, queued 10+20+10+10+10.
    CHECK_THAT(text.out, Catch::Contains("agent: implementing"));
    CHECK_THAT(text.out, Catch::Contains("1h00m   24%"));  // implementing, and bob's review
    CHECK_THAT(text.out, Catch::Contains("a person: review"));
    CHECK_THAT(text.out, Catch::Contains("queued (agent's turn)"));

    const auto json =
        boost::json::parse(b.board({"stats", "--since", "48h", "--json"}).out).as_object();
    CHECK(json.at("completed").as_int64() == 1);
    CHECK(json.at("cycle_time").at("p50_ms").as_int64() == 250 * 60'000);
    CHECK(json.at("agent_ms").at("research").as_int64() == 30 * 60'000);
    CHECK(json.at("human_ms").at("review").as_int64() == 60 * 60'000);
    CHECK(json.at("queued_ms").as_int64() == 60 * 60'000);

    // A window after all of it: nothing happened there.
    const auto later = b.board({"stats", "--since", "1h"});
    CHECK_THAT(later.out, Catch::Contains("throughput    0 completed, 0 cancelled, 0 created"));
    CHECK(b.board({"stats", "--since", "yesterday"}).exit_code == 2);
}
