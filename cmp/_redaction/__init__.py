"""The redaction pre-flight: its findings (_hit), the format's scan (_scan), the extended rules
(_extended) and the rule sets by name (_rules). Empty, so that importing one of them loads no other."""
