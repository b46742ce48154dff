// Histories for people: what each event changed, and the state in one line.

#include "cli/history.hpp"

#include "support/source_dir.hpp"

#include <board/app.hpp>
#include <board/reduce.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>

namespace fs = std::filesystem;
using namespace board;

TEST_CASE("replay --diff names each field an event changed", "[cli][replay]") {
    const auto history = app::Board{testing::source_dir()}.history("PROJ-1");
    REQUIRE(history);
    const auto& events = history.value().events;
    const Ticket before = fold(std::span{events}.first(8)).ticket;
    const Ticket after = fold(std::span{events}.first(9)).ticket;  // the rejection
    const auto changes = cli::describe_changes(before, after);
    const auto mentions = [&](std::string_view text) {
        return std::any_of(changes.begin(), changes.end(), [&](const std::string& c) {
            return c.find(text) != std::string::npos;
        });
    };
    CHECK(mentions("awaiting: \"approval\" → –"));
    CHECK(mentions("phase_attempts: 0 → 1"));
    // The note added, whole, not a prefix the two versions share.
    CHECK(mentions("notes: + {from: \"human\""));
    CHECK(std::none_of(changes.begin(), changes.end(), [](const std::string& c) {
        return c.starts_with("notes: [");
    }));
    CHECK_FALSE(mentions("title:"));
    CHECK(cli::describe_state(after) == "planning, agent's turn, attempts 1");
}

TEST_CASE("replay --diff looks inside lists and prints numbers as written", "[cli][replay]") {
    Ticket before;
    before.id = "P-1";
    Question q;
    q.id = "q1";
    q.question = "Which DB?";
    before.questions.push_back(q);
    Ticket after = before;
    after.cost_usd = 0.21;
    after.questions[0].status = QuestionStatus::answered;
    after.questions[0].answer = "postgres";
    Question q2;
    q2.id = "q2";
    q2.question = "Which port?";
    after.questions.push_back(q2);
    const auto changes = cli::describe_changes(before, after);
    const auto mentions = [&](std::string_view text) {
        return std::any_of(changes.begin(), changes.end(), [&](const std::string& c) {
            return c.find(text) != std::string::npos;
        });
    };
    CHECK(mentions("cost_usd: 0 → 0.21"));
    CHECK_FALSE(mentions("E-1"));
    CHECK(mentions("questions[q1].status: \"pending\" → \"answered\""));
    CHECK(mentions("questions[q1].answer: – → \"postgres\""));
    CHECK(mentions("questions: + {id: \"q2\""));
    CHECK_FALSE(mentions("questions[q1].question"));
}
