{#-
  Drop a schema and every relation in it, e.g. a development schema of shallow clones once its
  work is reviewed. A dry run by default: it lists what it would drop. It refuses the target's
  own schema (run against production, production's schema). Dropping a shallow clone deletes
  its own log and the files written to it, never the files it shares with its source.
-#}
{% macro drop_schema(schema, dry_run=true) %}
  {%- do delta_ops._require_sparkdelta('drop_schema') -%}
  {%- if dry_run is not boolean -%}
    {{ exceptions.raise_compiler_error("Invalid drop_schema dry_run " ~ (dry_run | string | tojson)
        ~ ": give true or false.") }}
  {%- endif -%}
  {%- set quoted = safe_identifier(schema, 'drop_schema schema') -%}
  {%- if schema | lower == target.schema | lower -%}
    {{ exceptions.raise_compiler_error("drop_schema: " ~ schema ~ " is the schema of target "
        ~ target.name ~ " itself; refusing to drop it. Run it against a target whose schema "
        ~ "is another one (e.g. production's, to drop a development schema).") }}
  {%- endif -%}
  {%- set found = delta_ops._try_sql("show schemas like '" ~ schema ~ "'") -%}
  {%- if found.error -%}
    {{ exceptions.raise_compiler_error("drop_schema: listing schemas failed: " ~ found.error) }}
  {%- endif -%}
  {%- if found.table.rows | length == 0 -%}
    {{ log("drop_schema: schema " ~ schema ~ " does not exist; nothing to drop.", info=True) }}
    {{ return({'schema': schema, 'relations': [], 'dropped': false}) }}
  {%- endif -%}
  {%- set listed = delta_ops._try_sql('show tables in ' ~ quoted) -%}
  {%- if listed.error -%}
    {{ exceptions.raise_compiler_error("drop_schema: listing " ~ schema ~ " failed: " ~ listed.error) }}
  {%- endif -%}
  {%- set names = listed.table.columns['tableName'].values() | reject('none') | sort | list -%}
  {%- set what = "schema " ~ schema ~ " and its " ~ names | length ~ " relation"
      ~ ('s' if names | length != 1 else '') ~ (": " ~ names | join(', ') if names else '') -%}
  {%- if dry_run -%}
    {{ log("drop_schema (dry run): would drop " ~ what ~ ". Pass dry_run: false to drop it.", info=True) }}
  {%- else -%}
    {%- set dropped = delta_ops._try_sql('drop schema ' ~ quoted ~ ' cascade') -%}
    {%- if dropped.error -%}
      {{ exceptions.raise_compiler_error("drop_schema: dropping " ~ schema ~ " failed: " ~ dropped.error) }}
    {%- endif -%}
    {{ log("drop_schema: dropped " ~ what ~ ".", info=True) }}
  {%- endif -%}
  {{ return({'schema': schema, 'relations': names, 'dropped': not dry_run}) }}
{% endmacro %}
