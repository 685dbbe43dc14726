"""Scenarios generated from the fault catalogue, what a system's tests can tell apart, and
benchmark splits (a layer beside :mod:`diagkg.agents`: it reads env, sim and kg).

* :mod:`~diagkg.generation.catalogue` — where the catalogue lets a fault be placed on a system;
* :mod:`~diagkg.generation.bench` — a placement tried on the system: what it shows, what it
  leaves faulty, masking, the cheapest repair;
* :mod:`~diagkg.generation.files`, :mod:`~diagkg.generation.wording` — scenario files and their words;
* :mod:`~diagkg.generation.generate` — ``diagkg generate``; :mod:`~diagkg.generation.coverage` —
  whether generated scenarios reproduce hand-written ones;
* :mod:`~diagkg.generation.probes`, :mod:`~diagkg.generation.diagnosability`,
  :mod:`~diagkg.generation.report` — ``diagkg diagnosability``;
* :mod:`~diagkg.generation.splits` — ``diagkg split``.
"""

STEP_BUDGET = 50_000           # simulated steps ``diagkg diagnosability`` spends on sequences of two or three probes
