// §1 and §7: what the orchestrator does next for a ticket, and the order tickets are taken in.

#include "reducer/testing.hpp"

#include <board/next_action.hpp>

#include <catch2/catch.hpp>

#include <algorithm>

using namespace board;
using namespace board::testing;

TEST_CASE("next_action says why a ticket is not runnable", "[next]") {
    struct IdleRow {
        const char* what;
        Ticket ticket;
        Policy policy;
        BoardFacts facts;
        Action expected;
    };

    Ticket epic = ticket_in(Status::backlog);
    epic.type = TicketType::epic;
    Ticket running = ticket_in(Status::research);
    running.run = Run{"r1", Status::research, t0, {}};
    Policy no_auto;
    no_auto.auto_research = false;
    BoardFacts blocked;
    blocked.blockers_done = false;
    BoardFacts research_full;
    research_full.in_status[static_cast<std::size_t>(Status::research)] = 3;
    const IdleRow row = GENERATE_COPY(values<IdleRow>({
        {"done", ticket_in(Status::done), {}, {}, Idle{IdleReason::done}},
        {"epic", epic, {}, {}, Idle{IdleReason::epic}},
        {"human",
         ticket_in(Status::review, Awaiting::review),
         {},
         {},
         AwaitHuman{Awaiting::review}},
        {"running", running, {}, {}, Idle{IdleReason::run_in_flight}},
        {"blocked", ticket_in(Status::backlog), {}, blocked, Idle{IdleReason::blocked}},
        {"auto research off", ticket_in(Status::backlog), no_auto, {}, Idle{IdleReason::auto_off}},
        {"auto planning off", ticket_in(Status::ready), {}, {}, Idle{IdleReason::auto_off}},
        {"wip", ticket_in(Status::backlog), {}, research_full, Idle{IdleReason::wip_limit}},
    }));
    CAPTURE(row.what);
    CHECK(next_action(row.ticket, row.policy, row.facts) == row.expected);
}

TEST_CASE("next_action starts the phase's agent with the policy it runs under", "[next]") {
    Policy policy;
    policy.auto_planning = true;
    policy.planning_gate = Gate::checkpoint;
    BoardFacts research_full;
    research_full.in_status[static_cast<std::size_t>(Status::research)] = 3;

    const auto from_backlog = std::get<StartRun>(next_action(ticket_in(Status::backlog), policy));
    CHECK(from_backlog.phase == Status::research);
    CHECK(from_backlog.attempt == 1);
    const auto planning = std::get<StartRun>(next_action(ticket_in(Status::ready), policy));
    CHECK(planning.phase == Status::planning);
    CHECK(planning.policy.gate == Gate::checkpoint);
    // A ticket already in research is counted there: a full column does not stop it.
    const auto in_research = next_action(ticket_in(Status::research), policy, research_full);
    CHECK(std::holds_alternative<StartRun>(in_research));
}

TEST_CASE("failed attempts back off exponentially up to the cap", "[next]") {
    Policy policy;
    policy.retry_backoff_ms = 1000;
    policy.retry_backoff_max_ms = 5000;
    const auto [attempts, delay] =
        GENERATE(table<int, UnixMillis>({{1, 1000}, {2, 2000}, {3, 4000}, {4, 5000}, {9, 5000}}));
    Ticket t = ticket_in(Status::implementing);
    t.phase_attempts = attempts;
    t.last_failure_at = t0;
    const auto run = std::get<StartRun>(next_action(t, policy));
    CHECK(run.attempt == attempts + 1);
    CHECK(run.not_before == t0 + delay);
}

TEST_CASE("question deadlines come from pending questions only", "[next][question]") {
    Ticket t = ticket_in(Status::research, Awaiting::input, Handoff::question);
    Question a;
    a.id = "q1";
    a.timeout_at = t0 + 5000;
    Question b = a;
    b.id = "q2";
    b.timeout_at = t0 + 1000;
    b.status = QuestionStatus::answered;
    Question c = a;
    c.id = "q3";
    c.timeout_at = t0 + 3000;
    t.questions = {a, b, c};
    CHECK(next_question_deadline(t) == t0 + 3000);
    CHECK(questions_due(t, t0 + 2999).empty());
    CHECK(questions_due(t, t0 + 5000) == std::vector<std::string>{"q1", "q3"});
}

TEST_CASE("next order: priority, epic momentum, epic, standalone, orphan, age, id",
          "[next][order]") {
    struct Entry {
        const char* id;
        int priority;
        EpicState epic;
        UnixMillis created;
    };

    // Listed in the expected order; shuffled below.
    const std::vector<Entry> expected{
        {"PROJ-9", 0, EpicState::none, t0 + 9},
        {"PROJ-5", 1, EpicState::in_flight, t0 + 5},
        {"PROJ-3", 1, EpicState::open, t0 + 1},
        {"PROJ-4", 1, EpicState::open, t0 + 2},
        {"PROJ-2", 1, EpicState::none, t0},
        {"PROJ-10", 1, EpicState::none, t0},
        {"PROJ-1", 1, EpicState::done, t0},
        {"PROJ-6", 3, EpicState::in_flight, t0},
    };
    std::vector<Ticket> tickets;
    for (const auto& e : expected) {
        Ticket t = ticket_in(Status::backlog);
        t.id = e.id;
        t.priority = e.priority;
        t.parent = e.epic == EpicState::none ? "" : "PROJ-100";
        t.created_at = e.created;
        tickets.push_back(t);
    }
    const auto epic_of = [&](const Ticket& t) {
        return std::find_if(
                   expected.begin(), expected.end(), [&](const Entry& e) { return e.id == t.id; })
            ->epic;
    };
    std::reverse(tickets.begin(), tickets.end());
    std::sort(tickets.begin(), tickets.end(), [&](const Ticket& a, const Ticket& b) {
        return comes_before(queue_key(a, epic_of(a)), queue_key(b, epic_of(b)));
    });
    for (std::size_t i = 0; i < expected.size(); ++i) CHECK(tickets[i].id == expected[i].id);
}

TEST_CASE("ids order by number, not text", "[next][order]") {
    CHECK(id_less("PROJ-2", "PROJ-10"));
    CHECK_FALSE(id_less("PROJ-10", "PROJ-2"));
    CHECK(id_less("ABC-99", "PROJ-1"));
}

TEST_CASE("ids of one length and of different lengths agree on one order", "[next][order]") {
    // Prefix first, then number; one number written two ways orders by its text.
    const std::vector<std::string> in_order{"A-1",
                                            "A-2",
                                            "A-10",
                                            "AB-1",
                                            "AB-07",
                                            "AB-7",
                                            "AB-08",
                                            "AB-9",
                                            "AB-010",
                                            "AB-10",
                                            "PROJ-99",
                                            "PROJ-100"};
    for (std::size_t i = 0; i < in_order.size(); ++i)
        for (std::size_t j = 0; j < in_order.size(); ++j) {
            INFO(in_order[i] << " against " << in_order[j]);
            CHECK(id_less(in_order[i], in_order[j]) == (i < j));
        }
}

TEST_CASE("WIP limits also cap the agents working a column a gate filled", "[next]") {
    BoardFacts facts;
    facts.in_status[static_cast<std::size_t>(Status::implementing)] = 3;  // over the limit of 2
    facts.runs_in_status[static_cast<std::size_t>(Status::implementing)] = 1;
    const Ticket t = ticket_in(Status::implementing);
    CHECK(std::holds_alternative<StartRun>(next_action(t, Policy{}, facts)));
    facts.runs_in_status[static_cast<std::size_t>(Status::implementing)] = 2;
    CHECK(next_action(t, Policy{}, facts) == Action{Idle{IdleReason::wip_limit}});
}
