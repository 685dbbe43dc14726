"""diagkg serve: the SPARQL 1.1 endpoint, the JSON API with live sessions, and the web page."""
