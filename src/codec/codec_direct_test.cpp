// Tests that the direct event decoder agrees with the JSON-document path on every line.

#include "codec/codec_test_support.hpp"
#include "codec/direct_decoder.hpp"

#include <board/codec.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <catch2/catch.hpp>

#include <cstddef>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace board;
using namespace board::codec_test;

}  // namespace

// ---------------------------------------------------------------------------------------------
// The direct path (no JSON document) against the document path: whatever the direct path
// accepts, it must decode exactly as the document path does. What it refuses goes to the
// document path, which words the error, so refusing is always safe; accepting never is.

namespace {

using codec_detail::decode_event_document;
using codec_detail::DirectEventDecoder;

/// Checks one line: if the direct path accepts it, the document path accepts it too, with the
/// same event. Returns whether the direct path accepted it.
bool direct_agrees(DirectEventDecoder& direct, const std::string& line) {
    Event event;
    const bool accepted = direct.decode(line, event);
    if (accepted) {
        CAPTURE(line);
        const auto document = decode_event_document(line);
        REQUIRE(document);
        REQUIRE(document.value() == event);
    }
    return accepted;
}

/// A JSON value of some kind, for replacing a field's value with.
boost::json::value some_value(std::mt19937& random) {
    static const std::vector<std::string> texts = {
        R"(null)",
        R"(true)",
        R"(false)",
        R"(0)",
        R"(-1)",
        R"(2147483648)",
        R"(-2147483649)",
        R"(9223372036854775807)",
        R"(18446744073709551615)",
        R"(1.5)",
        R"(-0.0)",
        R"(1e-400)",
        R"(1e308)",
        R"("")",
        R"("none")",
        R"("x")",
        R"("human:ana")",
        R"("system")",
        R"("agent:")",
        R"("research")",
        R"("approval")",
        R"("COMPLETE")",
        R"("rejected")",
        R"("blocking")",
        R"("choice")",
        R"("bug")",
        R"("work")",
        R"("2026-11-21T10:04:05.123Z")",
        R"("2026-02-30T10:04:05Z")",
        R"("note")",
        R"("run-started")",
        R"([])",
        R"(["a","b"])",
        R"([1])",
        R"([{"id":"a"}])",
        R"([{"id":"a","id":"b"}])",
        R"({})",
        R"({"id":"a"})",
        R"({"gate":"none"})",
        R"({"gate":"none","max_iterations":1,"max_attempts":1,"max_cost_usd":0,"review_agent":true})",
        R"([[[[]]]])",
        R"({"a":{"b":[null,{"c":1}]}})",
    };
    return boost::json::parse(texts[random() % texts.size()]);
}

/// One random structural change somewhere in `object` (or an object nested in it).
void mutate(boost::json::object& object, std::mt19937& random) {
    if (object.empty() || random() % 8 == 0) {
        object["unknown_" + std::to_string(random() % 3)] = some_value(random);
        return;
    }
    auto member = object.begin() + static_cast<std::ptrdiff_t>(random() % object.size());
    switch (random() % 5) {
        case 0:
            object.erase(member);
            return;
        case 1:
            member->value() = some_value(random);
            return;
        case 2: {
            // Move the member to the end: keys out of the codec's order.
            const std::string key = member->key();
            boost::json::value value = member->value();
            object.erase(member);
            object[key] = std::move(value);
            return;
        }
        default:
            if (auto* nested = member->value().if_object()) {
                mutate(*nested, random);
            } else if (auto* array = member->value().if_array(); array && !array->empty()) {
                auto& element = (*array)[random() % array->size()];
                if (auto* item = element.if_object())
                    mutate(*item, random);
                else
                    element = some_value(random);
            } else {
                member->value() = some_value(random);
            }
    }
}

}  // namespace

TEST_CASE("codec: the direct path accepts every line the encoder writes") {
    DirectEventDecoder direct;
    for (const Event& event : all_samples()) {
        const std::string line = encode_event(event);
        CAPTURE(line);
        Event decoded;
        REQUIRE(direct.decode(line, decoded));
        CHECK(decoded == event);
        Event with_newline;
        CHECK(direct.decode(line + " \n", with_newline));
        CHECK(with_newline == event);
    }
}

TEST_CASE("codec: the direct path agrees with the document path on hand-made lines") {
    DirectEventDecoder direct;
    const std::string v = R"("v":1,"seq":7,"id":"e7","at":"2026-11-21T10:04:05.123Z",)";
    const std::vector<std::string> lines = {
        // Accepted by both.
        "{" + v + R"("by":"human:ana","type":"note","text":"a","extra":{"x":[1,{"y":null}]}})",
        "{" + v + R"("by":"human:ana","type":"note","zzz":null,"text":"a"})",
        "{" + v + R"("by":"human:ana","type":"note","text":"\u00e9\n\"q\" \ud83d\ude00"})",
        "{" + v + R"("by":"human:ana","type":"note","text":")" + std::string(5000, 'x') + R"(\n"})",
        "{" + v + R"("by":"system","type":"run-finished","run":"r","exit":-1,"cost_usd":0})",
        "{" + v + R"("by":"system","type":"run-finished","run":"r","exit":0,"cost_usd":1e-400})",
        "{" + v + R"("by":"system","type":"run-finished","run":"r","exit":0,"cost_usd":0.1})",
        "{" + v + R"("by":"system","type":"updated","requires":"none","awaiting":"work"})",
        "{" + v + R"("by":"system","type":"updated","labels":[],"blocked_by":["A-1"]})",
        "{" + v +
            R"("by":"agent:research","type":"question-asked","question":"q","text":"t",)"
            R"("kind":"blocking","response_type":"choice","options":[{"id":"a","x":{}}]})",
        R"({"type":"started","by":"system","at":"2026-11-21T10:04:05Z","id":"e","seq":1,"v":1})",
        // Refused by the document path: the direct path must refuse them too.
        "{" + v + R"("by":"human:ana","type":"note","text":"a","text":"b"})",
        "{" + v + R"("by":"human:ana","type":"note","text":"a","v":1})",
        "{" + v + R"("by":"human:ana","type":"note","type":"note","text":"a"})",
        "{" + v + R"("by":"human:ana","type":"note","text":null})",
        "{" + v + R"("by":"human:ana","type":"note"})",
        "{" + v + R"("by":"human","type":"note","text":"a"})",
        "{" + v + R"("by":"human:ana","type":"notes","text":"a"})",
        "{" + v + R"("by":"human:ana","type":7,"text":"a"})",
        "{" + v + R"("by":"human:ana","type":"note","text":"a"} )" + "x",
        "{" + v + R"("by":"human:ana","type":"note","text":"a")",
        "{" + v + R"("by":"system","type":"run-finished","run":"r","exit":0,"cost_usd":1e400})",
        "{" + v +
            R"("by":"system","type":"run-finished","run":"r","exit":2147483648,)"
            R"("cost_usd":0})",
        "{" + v + R"("by":"system","type":"run-finished","run":"r","exit":1.0,"cost_usd":0})",
        "{" + v + R"("by":"system","type":"updated","requires":null})",
        "{" + v + R"("by":"system","type":"updated","labels":["a",1]})",
        "{" + v + R"("by":"system","type":"updated","labels":"a"})",
        "{" + v +
            R"("by":"system","type":"run-started","run":"r","phase":"research",)"
            R"("attempt":1,"iteration":1,"policy":{"gate":"none"}})",
        "{" + v +
            R"("by":"system","type":"run-started","run":"r","phase":"research",)"
            R"("attempt":1,"iteration":1,"policy":[]})",
        replaced("{" + v + R"("by":"system","type":"started"})", R"("v":1)", R"("v":2)"),
        replaced("{" + v + R"("by":"system","type":"started"})", R"("v":1)", R"("v":0)"),
        replaced("{" + v + R"("by":"system","type":"started"})", R"("seq":7)", R"("seq":-0.0)"),
        R"({"v":1,"seq":1,"id":"e","at":"2026-11-21T10:04:05Z","by":"system","text":"x",)"
        R"("type":"note"})",
        R"([])",
        R"("note")",
        "",
    };
    std::size_t accepted = 0;
    for (const auto& line : lines) {
        const bool ok = direct_agrees(direct, line);
        if (ok) ++accepted;
        // Whichever path decoded it, the public decoder's answer is the document path's.
        const auto expected = decode_event_document(line);
        const auto actual = decode_event(line);
        REQUIRE(actual.has_value() == expected.has_value());
        if (actual)
            CHECK(actual.value() == expected.value());
        else
            CHECK(actual.error() == expected.error());
    }
    CHECK(accepted == 11);
}

TEST_CASE("codec: the direct path agrees with the document path on mutated lines") {
    std::mt19937 random{20261123};
    DirectEventDecoder direct;
    EventDecoder decoder;
    const auto samples = all_samples();
    std::size_t accepted = 0;
    for (int round = 0; round < 20'000; ++round) {
        const Event& event = samples[random() % samples.size()];
        std::string line;
        if (round % 2 == 0) {
            // A structural change: fields dropped, retyped, reordered, added, nested.
            boost::json::value document = boost::json::parse(encode_event(event));
            for (int changes = 1 + static_cast<int>(random() % 3); changes > 0; --changes)
                mutate(document.as_object(), random);
            line = boost::json::serialize(document);
        } else {
            // Damaged bytes.
            line = encode_event(event);
            for (int flips = 1 + static_cast<int>(random() % 3); flips > 0; --flips)
                line[random() % line.size()] = static_cast<char>(random() % 256);
        }
        if (direct_agrees(direct, line)) ++accepted;
        const auto expected = decode_event_document(line);
        const auto actual = decoder.decode(line);
        REQUIRE(actual.has_value() == expected.has_value());
        if (!actual) REQUIRE(actual.error() == expected.error());
    }
    CHECK(accepted > 1000);  // the mutations exercise the direct path, not only its refusals
}
