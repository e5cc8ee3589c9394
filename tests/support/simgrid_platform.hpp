#pragma once
// SimGrid's copy of a trainsim topology, for the comparison tests: the engine configured as
// trainsim's network model (simgrid_cm02_args), one host per vertex, one link per link
// (split-duplex when full duplex, one shared resource when half duplex), and explicit routes
// along the hops trainsim's router chose, so a comparison tests the sharing model, not routing.

#include <simgrid/s4u.hpp>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/net/routing.hpp"
#include "sim/net/topology.hpp"
#include "tests/support/simgrid_cm02_args.hpp"

namespace trainsim::testing {

class SimgridPlatform {
 public:
  SimgridPlatform(const sim::Topology& topo, std::string program)
      : args_(simgrid_cm02_args(std::move(program))),
        argv_(pointers(args_)),
        argc_(static_cast<int>(argv_.size())),
        engine_(&argc_, argv_.data()),
        topo_(topo),
        router_(topo),
        zone_(simgrid::s4u::create_full_zone("world")) {
    namespace sg4 = simgrid::s4u;
    for (sim::VertexId v = 0; v < topo.num_vertices(); ++v)
      hosts_.push_back(zone_->create_host(topo.vertex(v).name, 1e9));
    for (sim::LinkId l = 0; l < topo.num_links(); ++l) {
      const sim::LinkProps& p = topo.link(l);
      const std::string name = "link" + std::to_string(l);
      if (p.duplex == sim::Duplex::full) {
        links_.push_back(zone_->create_split_duplex_link(name, p.bw_bytes_per_s)
                             ->set_latency(p.latency_s)
                             ->seal());
      } else {
        links_.push_back(zone_->create_link(name, p.bw_bytes_per_s)
                             ->set_latency(p.latency_s)
                             ->set_sharing_policy(sg4::Link::SharingPolicy::SHARED)
                             ->seal());
      }
    }
  }

  simgrid::s4u::Host* host(sim::VertexId v) const { return hosts_[v]; }

  // Adds the route a -> b (once per ordered pair) along trainsim's hops.
  void add_route(sim::VertexId a, sim::VertexId b) {
    namespace sg4 = simgrid::s4u;
    if (!routed_.insert({a, b}).second) return;
    std::vector<sg4::LinkInRoute> route;
    for (const sim::Hop& hop : router_.route(a, b).hops) {
      if (topo_.link(hop.link).duplex == sim::Duplex::full) {
        route.emplace_back(links_[hop.link], hop.forward ? sg4::LinkInRoute::Direction::UP
                                                         : sg4::LinkInRoute::Direction::DOWN);
      } else {
        route.emplace_back(links_[hop.link]);
      }
    }
    zone_->add_route(hosts_[a]->get_netpoint(), hosts_[b]->get_netpoint(), nullptr, nullptr, route,
                     false);
  }

  // Seals the platform and runs the actors created on it.
  void run() {
    zone_->seal();
    engine_.run();
  }

 private:
  static std::vector<char*> pointers(std::vector<std::string>& args) {
    std::vector<char*> out;
    for (auto& a : args)
      out.push_back(a.data());
    return out;
  }

  std::vector<std::string> args_;
  std::vector<char*> argv_;
  int argc_;
  simgrid::s4u::Engine engine_;
  const sim::Topology& topo_;
  sim::Router router_;
  simgrid::s4u::NetZone* zone_;
  std::vector<simgrid::s4u::Host*> hosts_;
  std::vector<simgrid::s4u::Link*> links_;
  std::set<std::pair<sim::VertexId, sim::VertexId>> routed_;
};

}  // namespace trainsim::testing
