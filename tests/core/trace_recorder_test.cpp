#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sim/core/engine.hpp"
#include "sim/hw/stream.hpp"
#include "sim/trace/trace_recorder.hpp"

using trainsim::sim::Engine;
using trainsim::sim::Stream;
using trainsim::sim::Time;
using trainsim::sim::TraceRecorder;

TEST_CASE("trace: tracks are per (process, thread) and reused", "[trace]") {
  TraceRecorder t;
  const auto a = t.track("gpu0", "compute");
  const auto b = t.track("gpu0", "comm");
  const auto c = t.track("gpu1", "compute");
  CHECK(t.track("gpu0", "compute") == a);
  CHECK(a != b);
  CHECK(b != c);
  CHECK(t.tracks() == 3);
}

TEST_CASE("trace: chrome JSON has exact microsecond timestamps and thread names", "[trace]") {
  TraceRecorder t;
  const auto gpu = t.track("gpu0", "compute");
  t.span(gpu, "conv1 fwd", "compute", Time::ps(1'500'000), Time::ps(4'000'001));
  t.instant(gpu, "step end", Time::us(7));
  std::ostringstream os;
  t.write_chrome_json(os);
  const auto j = nlohmann::json::parse(os.str());
  const auto& ev = j.at("traceEvents");
  bool saw_span = false, saw_instant = false, saw_thread = false;
  for (const auto& e : ev) {
    if (e.at("ph") == "X") {
      saw_span = true;
      CHECK(e.at("name") == "conv1 fwd");
      CHECK(e.at("cat") == "compute");
      CHECK(e.at("ts").get<double>() == Approx(1.5));
      CHECK(e.at("dur").get<double>() == Approx(2.500001));
    }
    if (e.at("ph") == "i") {
      saw_instant = true;
      CHECK(e.at("ts").get<double>() == 7.0);
    }
    if (e.at("ph") == "M" && e.at("name") == "thread_name") {
      saw_thread = true;
      CHECK(e.at("args").at("name") == "compute");
    }
  }
  CHECK(saw_span);
  CHECK(saw_instant);
  CHECK(saw_thread);
  CHECK(os.str().find("\"dur\":2.500001") != std::string::npos);
}

TEST_CASE("trace: a traced stream records each labelled item where it ran", "[trace]") {
  Engine engine;
  TraceRecorder t;
  Stream s(engine);
  s.trace_to(t, t.track("gpu0", "compute"));
  s.submit(Time::us(3), "a", "compute", {});
  s.submit(Time::us(2), {});  // unlabelled: not recorded
  s.submit(Time::us(1), "b", "compute", {});
  engine.run();
  REQUIRE(t.spans() == 2);
  std::ostringstream os;
  t.write_chrome_json(os);
  CHECK(
      os.str().find(R"("name":"b","cat":"compute","pid":0,"tid":0,"ts":5.000000,"dur":1.000000)") !=
      std::string::npos);
}

TEST_CASE("trace: rejects spans that end before they start", "[trace]") {
  TraceRecorder t;
  const auto k = t.track("p", "t");
  CHECK_THROWS_AS(t.span(k, "x", "c", Time::us(2), Time::us(1)), std::logic_error);
  CHECK_THROWS_AS(t.span(k + 1, "x", "c", Time::us(1), Time::us(2)), std::logic_error);
}
