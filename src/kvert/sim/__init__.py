"""The what-if simulator: scenarios, the virtual-time engine, metrics and reports."""

from kvert.sim.scenario import Scenario, ScenarioError, load_scenario, parse_scenario

__all__ = ["Scenario", "ScenarioError", "load_scenario", "parse_scenario"]
