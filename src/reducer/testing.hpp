#pragma once
// Test helpers for the reducer's tests: tickets built directly in a state (no replay needed)
// and a small log that stamps envelopes, so a test reads as the sequence of facts it checks.

#include <board/reduce.hpp>

#include <catch2/catch.hpp>

#include <string>

namespace board::testing {

inline constexpr UnixMillis t0 = 1'795'000'000'000;  // 2026-11-17, an arbitrary fixed instant

inline Actor human(std::string name = "ana") {
    return {ActorKind::human, std::move(name)};
}

inline Actor agent(Status phase = Status::research) {
    return {ActorKind::agent, std::string{to_string(phase)}};
}

inline Actor system_actor() {
    return {ActorKind::system, {}};
}

/// A ticket `PROJ-1` sitting in `status`, as if its log had brought it there.
inline Ticket ticket_in(Status status,
                        std::optional<Awaiting> awaiting = std::nullopt,
                        Handoff handoff = Handoff::signal) {
    Ticket t;
    t.id = "PROJ-1";
    t.title = "Add retry to the uploader";
    t.status = status;
    t.awaiting = awaiting;
    t.handoff = handoff;
    t.created_at = t0;
    t.phase_started_at = t0;
    t.seq = 5;
    if (status == Status::done) t.resolution = Resolution::completed;
    return t;
}

inline ArtifactRecorded complete_artifact(Status phase) {
    const auto kind = artifact_of(phase).value();
    return ArtifactRecorded{kind,
                            std::string{to_string(kind)} + ".md",
                            ArtifactStatus::complete,
                            "done",
                            std::string(64, 'a'),
                            std::nullopt};
}

/// Appends events to a ticket the way the event log would: next seq, a later `at`.
class Log {
public:
    explicit Log(Ticket start = {})
        : ticket_(std::move(start))
        , now_(t0 + 60'000) {}

    /// Applies the event; the ticket changes only if it was accepted.
    Reduced apply(Payload payload, Actor by = human()) {
        Event e{event_schema_version,
                ticket_.seq + 1,
                "e" + std::to_string(ticket_.seq + 1),
                now_,
                std::move(by),
                std::move(payload)};
        now_ += 1000;
        Reduced next = reduce(ticket_, e);
        if (next) ticket_ = next.value();
        return next;
    }

    /// Applies an event that must be accepted, and returns the ticket after it.
    const Ticket& must(Payload payload, Actor by = human()) {
        Reduced next = apply(std::move(payload), std::move(by));
        INFO((next ? std::string{} : next.error().message));
        REQUIRE(next.has_value());
        return ticket_;
    }

    /// Applies an event that must be refused for `reason`; the ticket must not change.
    Rejection refused(Payload payload, Actor by, RejectReason reason) {
        const Ticket before = ticket_;
        Reduced next = apply(std::move(payload), std::move(by));
        REQUIRE_FALSE(next.has_value());
        CHECK(to_string(next.error().reason) == to_string(reason));
        CHECK_FALSE(next.error().message.empty());
        CHECK(ticket_ == before);
        return next.error();
    }

    /// Starts and finishes one run of the ticket's phase with the given outcome, recording
    /// `artifact` during the run as an agent writing its file would.
    const Ticket& run(Status phase,
                      RunFinished outcome,
                      RunPolicy policy = {},
                      std::optional<ArtifactRecorded> artifact = std::nullopt) {
        const std::string id = "r" + std::to_string(ticket_.runs_total + 1);
        must(
            RunStarted{
                id, phase, ticket_.phase_attempts + 1, ticket_.phase_iterations + 1, policy, {}},
            system_actor());
        if (artifact) must(*artifact, agent(phase));
        outcome.run = id;
        return must(std::move(outcome), system_actor());
    }

    void advance_clock(UnixMillis ms) { now_ += ms; }

    UnixMillis now() const { return now_; }

    const Ticket& ticket() const { return ticket_; }

private:
    Ticket ticket_;
    UnixMillis now_;
};

inline RunFinished signalled(std::optional<Signal> signal, std::string context = {}) {
    RunFinished r;
    r.signal = signal;
    r.context = std::move(context);
    r.duration_ms = 1200;
    return r;
}

inline RunFinished failed(int exit_code) {
    RunFinished r;
    r.exit_code = exit_code;
    return r;
}

}  // namespace board::testing
