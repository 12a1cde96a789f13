"""KataGo's JSON analysis engine as a miai front end (``miai analysis``; docs/analysis.md).

Like gtp/, it drives the search through its public interface only: ``query`` reads a query into positions,
``settings`` maps KataGo's configuration onto miai's, ``report`` writes KataGo's response JSON and ``server`` runs
the queue, the worker threads and the I/O.
"""
