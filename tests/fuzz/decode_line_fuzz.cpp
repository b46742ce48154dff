// libFuzzer target for the only code that reads untrusted bytes from disk: one log line.
// Property: decoding never crashes or throws, and whatever decodes re-encodes to a line that
// decodes to the same event.
#include <board/codec.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static board::EventDecoder decoder;
    const std::string_view line{reinterpret_cast<const char*>(data), size};
    auto decoded = decoder.decode(line);
    if (!decoded) return 0;
    const std::string again = board::encode_event(decoded.value());
    auto round_trip = board::decode_event(again);
    if (!round_trip || !(round_trip.value() == decoded.value())) std::abort();
    return 0;
}
