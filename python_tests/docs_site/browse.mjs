// The browser side of test_docs_site.py: opens a dbt docs site in headless Chromium (Debian's,
// driven by playwright-core), reads what a person sees and prints it as JSON; the test asserts.
//
//   node browse.mjs <site url> <model unique id> <screenshot folder>
//
// 1. The model's page (`#!/model/<id>`): its title, description and columns table.
// 2. Its lineage graph (the "View Lineage Graph" button): the nodes cytoscape shows.
// 3. The project's whole graph (the same button on the overview page).
// For each graph: the visible nodes' ids, how many lie inside the drawn area, and how many
// pixels the node layer's canvas painted. A screenshot of each step in the screenshot folder.
import { chromium } from 'playwright-core';
import path from 'node:path';

const [site, modelId, shots] = process.argv.slice(2);
if (!shots) {
    console.error('usage: node browse.mjs <site url> <model unique id> <screenshot folder>');
    process.exit(2);
}
const TIMEOUT = 60_000;

// As root on a closed network: no sandbox, and none of Chromium's own connections (they are
// refused, many at a time, or fail to resolve).
const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: [
        '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
    timeout: TIMEOUT,
});
const seen = { page_errors: [], failed_requests: [], screenshots: {} };

async function newPage() {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.setDefaultTimeout(TIMEOUT);
    page.on('pageerror', (error) => seen.page_errors.push(String(error)));
    page.on('requestfailed', (request) => seen.failed_requests.push(request.url()));
    return page;
}

async function screenshot(page, name, fullPage) {
    const file = path.join(shots, `${name}.png`);
    await page.screenshot({ path: file, fullPage });
    seen.screenshots[name] = file;
}

// The cytoscape instance dbt docs draws its graph with (cytoscape keeps it on its container).
function graphState() {
    const container = document.querySelector('#cy');
    const cy = container && container._cyreg && container._cyreg.cy;
    if (!cy || container.offsetWidth === 0) return null;
    const nodes = cy.nodes(':visible');
    const [width, height] = [cy.width(), cy.height()];
    const inside = nodes.filter((node) => {
        const box = node.renderedBoundingBox();
        return box.x2 > 0 && box.y2 > 0 && box.x1 < width && box.y1 < height;
    });
    const layer = container.querySelector('canvas[data-id="layer2-node"]');
    let painted = 0;
    if (layer && layer.width && layer.height) {
        const pixels = layer.getContext('2d').getImageData(0, 0, layer.width, layer.height).data;
        for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) painted += 1;
    }
    return {
        visible: nodes.map((node) => node.id()).sort(),
        inside: inside.length,
        painted_pixels: painted,
        positions: nodes.map((node) => `${node.id()}@${node.renderedPosition('x')},${node.renderedPosition('y')}`).join(';'),
    };
}

// The graph once it shows nodes and they have stopped moving (two reads 250 ms apart agree).
async function settledGraph(page) {
    let last = null;
    for (const deadline = Date.now() + TIMEOUT; Date.now() < deadline;) {
        const state = await page.evaluate(graphState);
        if (state && state.visible.length && state.painted_pixels && last && state.positions === last.positions) {
            delete state.positions;
            return state;
        }
        last = state;
        await page.waitForTimeout(250);
    }
    return last;
}

try {
    // 1. The model's page.
    const page = await newPage();
    await page.goto(`${site}/#!/model/${modelId}`);
    await page.locator('tr.column-row').first().waitFor();
    seen.model = await page.evaluate(() => {
        const section = (title) => [...document.querySelectorAll('section.section')]
            .find((s) => s.querySelector('h6') && s.querySelector('h6').textContent.trim() === title);
        const description = section('Description');
        return {
            title: document.querySelector('.app-title h1, h1').innerText,
            description: description ? description.querySelector('.panel-body').innerText : null,
            columns: [...document.querySelectorAll('tr.column-row')].map((row) => {
                const cells = row.querySelectorAll('td');
                return {
                    name: cells[0].innerText.trim(),
                    type: cells[1].innerText.trim(),
                    description: cells[2].textContent.trim(),
                };
            }),
        };
    });
    await screenshot(page, 'model_page', true);

    // 2. Its lineage graph: the button at the bottom right of the page.
    await page.locator('.launcher-btn a').click();
    seen.lineage = await settledGraph(page);
    await screenshot(page, 'model_lineage', false);
    await page.close();

    // 3. The whole project's graph: the same button on the overview page.
    const overview = await newPage();
    await overview.goto(`${site}/#!/overview`);
    await overview.locator('.launcher-btn a').click();
    seen.project_graph = await settledGraph(overview);
    await screenshot(overview, 'project_lineage', false);
    await overview.close();
} catch (error) {
    seen.error = String(error && error.stack || error);
} finally {
    await browser.close();
}
console.log(JSON.stringify(seen, null, 2));
