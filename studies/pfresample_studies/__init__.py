"""The reproductions of pfresample, on top of the library (``pfresample``), which never
imports them: ``pipeline`` (what every study shares: artifacts, tables, plots, devices,
evidence, compiled CPU code) and one package per source document (``dulger2017``,
``guldas2015``, ``cpf2013``, ``d3_2014``, ``moazeni2013``). Each study knows its document;
nothing else knows it."""
