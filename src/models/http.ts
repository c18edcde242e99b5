import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { ProblemResponses } from '../platform/http/openapi.js';
import type { ModelCatalogue } from './catalogue.js';
import { ModelList } from './schemas.js';

export function registerModelRoutes(parent: FastifyInstance, catalogue: ModelCatalogue): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/agent/models',
    {
      schema: {
        tags: ['Models'],
        summary: 'The model catalogue: the default, every model with its cost, and why one cannot be used now',
        response: { 200: ModelList, ...ProblemResponses },
      },
    },
    async (): Promise<ModelList> => ({
      default_model_id: catalogue.defaultModelId,
      models: catalogue.models.map((model) => {
        const availability = catalogue.availability(model);
        return {
          id: model.id,
          display_name: model.display_name,
          provider: model.provider,
          vision_supported: model.vision_supported,
          ...(model.description ? { description: model.description } : {}),
          ...(model.reasoning_level ? { reasoning_level: model.reasoning_level } : {}),
          cost: {
            currency: 'USD',
            input_per_million_tokens: model.cost.input,
            output_per_million_tokens: model.cost.output,
          },
          ...(availability.usable
            ? {}
            : { disable_reason: availability.reason, disabled_reason_detail: availability.detail }),
        };
      }),
    }),
  );
}
