"""The data model: entities, relations, documents, evidence and topics with stable ids; settings; labels.

Owns what every other layer agrees on — the records a KB holds (``schema``), the process settings
(``settings``: defaults, ``.env``, ``EVIGRAPH_*``) and the evidence labels with their question cues
(``labels``). Imports nothing from ``graphs``: it is the bottom layer.
"""
