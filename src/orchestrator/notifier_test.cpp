// Notifications: what is announced (pure), and the command run for it (real processes).

#include "orchestrator/notifier.hpp"

#include "support/temp_dir.hpp"
#include "support/wait.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

using namespace board;
using namespace board::orchestrator;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

Ticket ticket(std::optional<Awaiting> awaiting = std::nullopt) {
    Ticket t;
    t.id = "PROJ-7";
    t.title = "Pick a database";
    t.status = Status::research;
    t.awaiting = awaiting;
    return t;
}

Question question(std::string id) {
    Question q;
    q.id = std::move(id);
    q.question = "SQLite or Postgres?";
    q.response_type = ResponseType::choice;
    q.options = {{"a", "SQLite", "sqlite", ""}, {"b", "Postgres", "postgres", ""}};
    return q;
}

struct TempDir : testing::TempDir {
    TempDir()
        : testing::TempDir("board-notify-") {}
};

std::string slurp(const fs::path& file) {
    std::ifstream in(file);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Waits for every command in flight to end, then reaps them.
void wait_idle(Notifier& n) {
    for (const int pid : n.in_flight_pids()) CHECK(board::testing::wait_for_end(pid, 20s));
    n.reap();
}

}  // namespace

TEST_CASE("a ticket that starts awaiting a person is announced once", "[notifier]") {
    const Ticket idle = ticket();
    const Ticket waiting = ticket(Awaiting::approval);
    auto got = notifications_for(idle, waiting);
    REQUIRE(got.size() == 1);
    CHECK(got[0].reason == Notification::Reason::awaiting);
    CHECK(got[0].awaiting == "approval");
    CHECK(notifications_for(waiting, waiting).empty());  // still awaiting: no news
    CHECK(notifications_for(waiting, idle).empty());     // released: no news
    CHECK(notifications_for(waiting, ticket(Awaiting::review)).size() == 1);  // another type
    CHECK(notifications_for(Ticket{}, waiting).size() == 1);                  // created awaiting
    CHECK(notifications_for(Ticket{}, Ticket{}).empty());
}

TEST_CASE("each newly asked question is announced - its handoff is not announced twice",
          "[notifier]") {
    Ticket before = ticket();
    Ticket after = ticket(Awaiting::input);
    after.handoff = Handoff::question;
    after.questions.push_back(question("q1"));
    auto got = notifications_for(before, after);
    REQUIRE(got.size() == 1);
    CHECK(got[0].reason == Notification::Reason::question);
    CHECK(got[0].question_id == "PROJ-7.q1");
    CHECK(got[0].response_type == "choice");
    const std::vector<std::pair<std::string, std::string>> labelled{{"a", "SQLite"},
                                                                    {"b", "Postgres"}};
    CHECK(got[0].options == labelled);
    CHECK(notifications_for(after, after).empty());

    // A non-blocking question leaves the ticket with the agent: announced as a question.
    Ticket nb = ticket();
    nb.questions.push_back(question("q2"));
    got = notifications_for(before, nb);
    REQUIRE(got.size() == 1);
    CHECK(got[0].awaiting.empty());

    // Answered questions are history.
    Ticket answered = after;
    answered.questions[0].status = QuestionStatus::answered;
    CHECK(notifications_for(before, answered).size() == 1);  // only the awaiting
}

TEST_CASE("the command gets the details in its environment and as JSON on stdin", "[notifier]") {
    TempDir tmp;
    NotifyConfig config;
    // The test's command is a shell script; the notifier itself never uses a shell.
    config.command = {
        "/bin/sh", "-c", "env | grep '^BOARD_' | sort > env.txt; cat > stdin.json; pwd > cwd.txt"};
    Notifier notifier(config, tmp.path());
    Ticket after = ticket(Awaiting::input);
    after.handoff = Handoff::question;
    after.questions.push_back(question("q1"));
    ::setenv("BOARD_TICKET", "stale", 1);  // the daemon's own environment must not leak in
    notifier.notify_changes(ticket(), after);
    ::unsetenv("BOARD_TICKET");
    CHECK(notifier.started() == 1);
    wait_idle(notifier);
    CHECK(notifier.failed() == 0);
    const auto env = slurp(tmp.path() / "env.txt");
    CHECK(env.find("BOARD_TICKET=PROJ-7\n") != std::string::npos);
    CHECK(env.find("BOARD_TICKET=stale") == std::string::npos);
    CHECK(env.find("BOARD_REASON=question\n") != std::string::npos);
    CHECK(env.find("BOARD_AWAITING=input\n") != std::string::npos);
    CHECK(env.find("BOARD_QUESTION_ID=PROJ-7.q1\n") != std::string::npos);
    CHECK(env.find("BOARD_DIR=" + tmp.path().string()) != std::string::npos);
    const auto json = boost::json::parse(slurp(tmp.path() / "stdin.json"));
    CHECK(json.at("ticket") == "PROJ-7");
    CHECK(json.at("question") == "SQLite or Postgres?");
    CHECK(json.at("options").as_array().size() == 2);
    CHECK(slurp(tmp.path() / "cwd.txt") == fs::canonical(tmp.path()).string() + "\n");
}

TEST_CASE("the payload says what is asked, by whom, with option labels and a link to the page",
          "[notifier]") {
    TempDir tmp;
    NotifyConfig config;
    config.command = {"/bin/sh",
                      "-c",
                      "env | grep '^BOARD_' > env.txt; printf '%s' \"$BOARD_OPTIONS\" > "
                      "options.txt; cat > stdin.json"};
    Notifier notifier(config, tmp.path());
    notifier.set_page("http://127.0.0.1:8080/");

    SECTION("an escalation: the board's reason") {
        Ticket after = ticket(Awaiting::escalation);
        after.handoff = Handoff::system;
        after.notes.push_back(Note{ActorKind::system, "", "research run 0003 failed: exit 2", 10});
        notifier.notify_changes(ticket(), after);
        wait_idle(notifier);
        const auto env = slurp(tmp.path() / "env.txt");
        CHECK(env.find("BOARD_REQUEST=research run 0003 failed: exit 2\n") != std::string::npos);
        CHECK(env.find("BOARD_ASKED_BY=system\n") != std::string::npos);
        CHECK(env.find("BOARD_URL=http://127.0.0.1:8080/#/ticket/PROJ-7\n") != std::string::npos);
        const auto json = boost::json::parse(slurp(tmp.path() / "stdin.json"));
        CHECK(json.at("request") == "research run 0003 failed: exit 2");
        CHECK(json.at("url") == "http://127.0.0.1:8080/#/ticket/PROJ-7");
    }
    SECTION("a question: its options with their labels") {
        Ticket after = ticket(Awaiting::input);
        after.handoff = Handoff::question;
        after.questions.push_back(question("q1"));
        notifier.notify_changes(ticket(), after);
        wait_idle(notifier);
        const auto env = slurp(tmp.path() / "env.txt");
        CHECK(slurp(tmp.path() / "options.txt") == "a=SQLite\nb=Postgres\n");
        const auto json = boost::json::parse(slurp(tmp.path() / "stdin.json"));
        const auto& options = json.at("options").as_array();
        REQUIRE(options.size() == 2);
        CHECK(options[0].at("id") == "a");
        CHECK(options[0].at("label") == "SQLite");
    }
}

TEST_CASE("notifying never waits: bounded in flight, killed after the timeout", "[notifier]") {
    TempDir tmp;
    NotifyConfig config;
    config.command = {"sleep", "30"};
    config.timeout = std::chrono::milliseconds(200);
    config.max_parallel = 2;
    Notifier notifier(config, tmp.path());
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 3; ++i) notifier.notify_changes(ticket(), ticket(Awaiting::approval));
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
    CHECK(notifier.started() == 2);
    CHECK(notifier.dropped() == 1);
    CHECK(notifier.in_flight() == 2);
    notifier.reap(std::chrono::steady_clock::now() + 300ms);  // past the timeout: kills both groups
    wait_idle(notifier);
    CHECK(notifier.in_flight() == 0);
    CHECK(notifier.failed() == 2);
    CHECK(notifier.last_error().find("killed") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
}

TEST_CASE("a command that cannot start is counted, not thrown - none configured is a no-op",
          "[notifier]") {
    TempDir tmp;
    NotifyConfig config;
    config.command = {"/nonexistent/notify"};
    Notifier notifier(config, tmp.path());
    notifier.notify_changes(ticket(), ticket(Awaiting::approval));
    wait_idle(notifier);
    CHECK(notifier.failed() == 1);
    CHECK_FALSE(notifier.last_error().empty());

    Notifier off(NotifyConfig{}, tmp.path());
    off.notify_changes(ticket(), ticket(Awaiting::approval));
    CHECK(off.started() == 0);
}

TEST_CASE("each kind of failure is reported once, in words a person can act on", "[notifier]") {
    TempDir tmp;
    std::vector<std::string> reported;
    const auto report = [&](const std::string& line) { reported.push_back(line); };

    SECTION("a command that is not installed") {
        NotifyConfig config;
        config.command = {"board-no-such-notify-send"};
        Notifier notifier(config, tmp.path(), report);
        for (int i = 0; i < 3; ++i) notifier.notify_changes(ticket(), ticket(Awaiting::approval));
        wait_idle(notifier);
        CHECK(notifier.failed() == 3);
        REQUIRE(reported.size() == 1);
        CHECK(reported[0] ==
              "notify: cannot run `board-no-such-notify-send`: No such file or directory "
              "(reported once; later ones are counted)");
    }
    SECTION("a command that fails, then one that fails otherwise") {
        NotifyConfig config;
        config.command = {"sh", "-c", "read line; exit 3"};
        Notifier notifier(config, tmp.path(), report);
        for (int i = 0; i < 2; ++i) {
            notifier.notify_changes(ticket(), ticket(Awaiting::approval));
            wait_idle(notifier);
        }
        CHECK(notifier.failed() == 2);
        CHECK(reported == std::vector<std::string>{
                              "notify: `sh` exited 3 (reported once; later ones are counted)"});
    }
}
