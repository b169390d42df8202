{#-
  Run `step(table, options)` on every selected table, with "i of n" progress and timings; a
  failed table does not stop the others. Ends with a summary table and, when any table
  failed, an error listing the failures (dbt exits non-zero). `step` returns
  {'status': 'ok' | 'dry run' | 'failed', 'note': text}.
-#}
{% macro _run_for_each_table(operation, selection, step, options={}) %}
  {%- set total = selection.tables | length -%}
  {%- for skipped in selection.skipped -%}
    {{ log(operation ~ ": skipped " ~ skipped.name ~ ": " ~ skipped.note, info=True) }}
  {%- endfor -%}
  {%- if total == 0 -%}
    {{ log(operation ~ ": no Delta table selected; nothing to do.", info=True) }}
  {%- endif -%}
  {%- set results = [] -%}
  {%- for table in selection.tables -%}
    {%- set started = modules.datetime.datetime.now() -%}
    {{ log(operation ~ ": " ~ loop.index ~ " of " ~ total ~ " " ~ table.name ~ " ...", info=True) }}
    {%- set outcome = step(table, options) -%}
    {%- set seconds = (modules.datetime.datetime.now() - started).total_seconds() -%}
    {{ log(operation ~ ": " ~ loop.index ~ " of " ~ total ~ " " ~ table.name ~ " "
        ~ outcome.status ~ " in " ~ '%.1f' | format(seconds) ~ "s: " ~ outcome.note, info=True) }}
    {%- do results.append({'name': table.name, 'status': outcome.status,
        'seconds': seconds, 'note': outcome.note}) -%}
  {%- endfor -%}
  {%- for skipped in selection.skipped -%}
    {%- do results.append({'name': skipped.name, 'status': 'skipped', 'seconds': 0,
        'note': skipped.note}) -%}
  {%- endfor -%}
  {%- set width = [results | map(attribute='name') | map('length') | max if results else 5, 5] | max -%}
  {{ log(operation ~ " summary:", info=True) }}
  {{ log("  " ~ 'table'.ljust(width) ~ "  " ~ 'status'.ljust(8) ~ "  seconds  note", info=True) }}
  {%- for result in results -%}
    {{ log("  " ~ result.name.ljust(width) ~ "  " ~ result.status.ljust(8) ~ "  "
        ~ ('%7.1f' | format(result.seconds)) ~ "  " ~ result.note, info=True) }}
  {%- endfor -%}
  {%- set failed = results | selectattr('status', 'equalto', 'failed') | list -%}
  {%- if failed -%}
    {%- set lines = [] -%}
    {%- for result in failed -%}{%- do lines.append(result.name ~ ': ' ~ result.note) -%}{%- endfor -%}
    {{ exceptions.raise_compiler_error(
        operation ~ ": " ~ failed | length ~ " of " ~ total ~ " tables failed: " ~ lines | join('; ')) }}
  {%- endif -%}
  {{ return(results) }}
{% endmacro %}
