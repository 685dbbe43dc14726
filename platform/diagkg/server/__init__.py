"""diagkg serve: the SPARQL 1.1 endpoint, the JSON API with live sessions, and the web page.

==================  =============================================================
``app``             the FastAPI application: ``/sparql``, ``/rdf-graphs``, wiring
``state``           what routes share: configuration, the store, the token check
``sparql_pool``     SPARQL in worker processes: time limit (kill), size limit, formats
``api``             JSON API: systems, schematics, scenarios (validate, load),
                    assistants, trajectories, queries, graphs, campaigns' graphs
``live``            live sessions in threads, server-sent events, people taking part
``pages``           the web page (``static/``: plain HTML, JS and CSS, no CDN)
==================  =============================================================

Campaigns and reports of the evaluation layer get their routes in a module of
their own here (``campaigns.py``, included by :func:`diagkg.server.app.create_app`),
next to ``/api/campaigns`` which lists the ``evaluation/…`` graphs.
"""
