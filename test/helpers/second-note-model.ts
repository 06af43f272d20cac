// A second model file declaring the Parse class "DupNote" that
// schema-declarations.test.ts declares too: importing it must be refused.
import { BaseModel, ParseClass, ParseField } from '../../lib/index.js'

@ParseClass('DupNote')
export class DupNote extends BaseModel {
  @ParseField({ type: 'String' }) declare body: string
}
