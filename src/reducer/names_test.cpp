// The wire spellings: every enumerator round-trips, ids are validated before they reach a disk;
// and a Ticket is a plain value (its artifact slots included).

#include <board/event.hpp>
#include <board/ticket.hpp>

#include <catch2/catch.hpp>

using namespace board;

namespace {

template <class Enum>
void check_round_trip(int count) {
    for (int i = 0; i < count; ++i) {
        const auto value = static_cast<Enum>(i);
        const auto name = to_string(value);
        CAPTURE(i, name);
        CHECK(parse<Enum>(name) == value);
    }
    CHECK_FALSE(parse<Enum>("no-such-name"));
}

}  // namespace

TEST_CASE("every enumerator round-trips through its wire name", "[names]") {
    check_round_trip<Status>(7);
    check_round_trip<Resolution>(2);
    check_round_trip<Awaiting>(7);
    check_round_trip<Handoff>(4);
    check_round_trip<Gate>(3);
    check_round_trip<TicketType>(5);
    check_round_trip<ArtifactKind>(4);
    check_round_trip<ArtifactStatus>(3);
    check_round_trip<ActorKind>(3);
    check_round_trip<QuestionKind>(4);
    check_round_trip<ResponseType>(4);
    check_round_trip<QuestionStatus>(4);
    check_round_trip<Signal>(9);
    check_round_trip<Verdict>(2);
    CHECK(to_string(ArtifactKind::implementation_log) == "implementation-log");
    CHECK(to_string(Signal::content_review) == "CONTENT_REVIEW");
}

TEST_CASE("ticket ids match ^[A-Z][A-Z0-9]{0,15}-[0-9]{1,9}$", "[names][security]") {
    const auto [id, valid] = GENERATE(table<const char*, bool>({
        {"PROJ-12", true},
        {"A-1", true},
        {"A1B2-123456789", true},
        {"ABCDEFGHIJKLMNOP-1", true},
        {"ABCDEFGHIJKLMNOPQ-1", false},
        {"PROJ-1234567890", false},
        {"proj-1", false},
        {"1PROJ-1", false},
        {"PROJ-", false},
        {"-1", false},
        {"PROJ-1/../x", false},
        {"../PROJ-1", false},
        {"PROJ_1", false},
        {"", false},
        {"PROJ-1-2", false},
    }));
    CAPTURE(id);
    CHECK(is_valid_ticket_id(id) == valid);
}

TEST_CASE("actors are human:<name>, agent:<phase> or system", "[names]") {
    CHECK(parse_actor("human:ana") == Actor{ActorKind::human, "ana"});
    CHECK(parse_actor("agent:research") == Actor{ActorKind::agent, "research"});
    CHECK(parse_actor("system") == Actor{ActorKind::system, ""});
    CHECK(to_string(Actor{ActorKind::human, "ana"}) == "human:ana");
    for (const char* bad : {"human", "human:", "robot:x", "system:x", "human:a b", ""}) {
        CAPTURE(bad);
        CHECK_FALSE(parse_actor(bad));
    }
    CHECK(is_valid_actor(Actor{ActorKind::agent, "review"}));
    CHECK(is_valid_actor(Actor{ActorKind::system, ""}));
    for (const Actor& bad : {Actor{ActorKind::human, ""},
                             Actor{ActorKind::human, "two words"},
                             Actor{ActorKind::agent, "tab\there"},
                             Actor{ActorKind::system, "x"}}) {
        CAPTURE(to_string(bad));
        CHECK_FALSE(is_valid_actor(bad));
    }
}

TEST_CASE("a ticket's artifact slots are a value: copied, compared and empty until written",
          "[ticket]") {
    Ticket a;
    CHECK_FALSE(a.artifact(ArtifactKind::plan));
    const Ticket& read_only = a;
    CHECK_FALSE(read_only.artifact(ArtifactKind::research));
    Ticket b = a;
    CHECK(a == b);

    Artifact plan;
    plan.path = "plan.md";
    plan.summary = "the plan";
    a.artifact(ArtifactKind::plan) = plan;
    CHECK(a != b);
    b = a;  // a deep copy: changing one leaves the other
    CHECK(a == b);
    b.artifact(ArtifactKind::plan)->summary = "changed";
    CHECK(a.artifact(ArtifactKind::plan)->summary == "the plan");
    CHECK(a != b);

    // Slots allocated but empty compare equal to slots never allocated.
    Ticket touched;
    touched.artifact(ArtifactKind::review).reset();
    CHECK(touched == Ticket{});

    Ticket moved = std::move(a);
    CHECK(moved.artifact(ArtifactKind::plan)->path == "plan.md");
}
