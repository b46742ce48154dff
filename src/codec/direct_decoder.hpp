#pragma once
// The fast path of event decoding: one line straight from Boost.JSON's parser callbacks into
// an Event, with no boost::json::value in between (building that document cost more than
// parsing the text, and a replay decodes every line of a log).
//
// The contract is deliberately one-sided. decode() either produces exactly the Event that the
// document path (read_event over a parsed value) produces for the same line, or gives up and
// returns false. It never reports errors: anything it does not accept (bad JSON, a wrong type,
// a missing or duplicate field, an unknown spelling, a payload field before `type`...) is
// handed back, and the caller decodes that line the slow way, which names the field and the
// problem. Error messages therefore have a single source, and the fast path only has to be
// right about what it accepts.

#include <board/codec.hpp>
#include <board/event.hpp>

#include <memory>
#include <string_view>

namespace board::codec_detail {

class DirectEventDecoder {
public:
    DirectEventDecoder();
    ~DirectEventDecoder();
    DirectEventDecoder(const DirectEventDecoder&) = delete;
    DirectEventDecoder& operator=(const DirectEventDecoder&) = delete;
    DirectEventDecoder(DirectEventDecoder&&) = delete;
    DirectEventDecoder& operator=(DirectEventDecoder&&) = delete;

    /// Decodes `line` (trailing whitespace allowed) into `out`, a default-constructed Event.
    /// True: `out` is the line's event. False: the line needs the document path; `out` holds
    /// whatever was decoded before giving up and must be discarded. Never throws except
    /// std::bad_alloc.
    bool decode(std::string_view line, Event& out);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// The document path alone, for tests that hold the two paths to the same results. Same
/// contract as decode_event().
DecodeResult<Event> decode_event_document(std::string_view line);

}  // namespace board::codec_detail
