"""Engine-vs-engine matches over GTP: the runner and its referee, the summary, Elo with intervals and the SPRT.

A front end beside the search, like gtp/: it drives engines through their GTP processes (``miai.gtp.client``) and
imports go/ and gtp/ (and nets/ only for the optional dead-stone model).
"""
