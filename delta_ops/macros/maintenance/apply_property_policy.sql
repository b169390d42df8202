{#-
  Bring the properties, features and constraints of existing tables in line with their models'
  config without running the models: the same statements a model's incremental run would make
  (get_reconcile_delta_table_sql). A dry run by default (it lists the statements):
  enabling a feature upgrades the table protocol, which cannot be undone. `dry_run: false`
  applies. Properties the project never set on a table are left alone.
-#}
{% macro apply_property_policy(models=none, tags=none, schema=none, pattern=none, dry_run=true) %}
  {%- if dry_run is not boolean -%}
    {{ exceptions.raise_compiler_error(
        "Invalid apply_property_policy dry_run " ~ (dry_run | string | tojson) ~ ": give true or false.") }}
  {%- endif -%}
  {%- set selection = delta_ops._select_delta_tables('apply_property_policy', models, tags, schema, pattern) -%}
  {{ return(delta_ops._run_for_each_table('apply_property_policy' ~ (' (dry run)' if dry_run else ''),
      selection, delta_ops._apply_property_policy_table, {'dry_run': dry_run})) }}
{% endmacro %}

{% macro _apply_property_policy_table(table, options) %}
  {%- if table.node is none -%}
    {{ return({'status': 'ok', 'note': 'no model of the project writes this table; left alone'}) }}
  {%- endif -%}
  {%- set listing = delta_ops._try_sql('show tblproperties ' ~ table.relation) -%}
  {%- if listing.error -%}{{ return(delta_ops._failed(listing.error)) }}{%- endif -%}
  {%- set current = {} -%}
  {%- for row in listing.table.rows -%}{%- do current.update({row[0]: row[1]}) -%}{%- endfor -%}
  {#-- the same diff as a model run makes (clustering is left to the model's own runs) --#}
  {%- set clustering = table.detail.clusteringColumns | list -%}
  {%- set statements = get_reconcile_delta_table_sql(table.relation,
      get_delta_table_properties(table.node, table.node.config), current,
      clustering, clustering) -%}
  {%- if not statements -%}{{ return({'status': 'ok', 'note': 'properties match the model'}) }}{%- endif -%}
  {%- if options.dry_run -%}
    {{ return({'status': 'dry run', 'note': 'would run: ' ~ statements | join('; ')}) }}
  {%- endif -%}
  {%- for statement in statements -%}
    {%- set result = delta_ops._try_sql(statement) -%}
    {%- if result.error -%}{{ return(delta_ops._failed(statement ~ ': ' ~ result.error)) }}{%- endif -%}
  {%- endfor -%}
  {{ return({'status': 'ok', 'note': 'ran: ' ~ statements | join('; ')}) }}
{% endmacro %}
